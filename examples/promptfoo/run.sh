#!/usr/bin/env bash
# One command, offline: bash examples/promptfoo/run.sh [config.yaml]
# Installs Node 22 + promptfoo into .cache/ once (scripts/install_promptfoo.sh), then runs
# promptfoo with the Python that has trajcheck (PROMPTFOO_PYTHON, else the repository's .venv):
# by default on refund_desk.yaml (results.json, trajcheck-summary.json) and then on
# final_state.yaml (final state from a sandbox fixture; final_state_results.json), else on the
# config given. promptfoo exits 100 when any assertion fails; several fail on purpose here.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
while IFS='=' read -r k v; do export "$k=$v"; done < <(bash "$ROOT/scripts/install_promptfoo.sh" | grep -E '^[A-Z_0-9]+=')
export PATH="$NODE22_BIN:$PATH"
if [ -z "${PROMPTFOO_PYTHON:-}" ]; then
    if [ -x "$ROOT/.venv/bin/python" ]; then PROMPTFOO_PYTHON="$ROOT/.venv/bin/python"; else PROMPTFOO_PYTHON="$(command -v python3)"; fi
fi
export PROMPTFOO_PYTHON
# promptfoo waits only 1.5 s for a run's spans by default; a busy machine needs longer
export PROMPTFOO_TRACE_FETCH_MAX_ATTEMPTS="${PROMPTFOO_TRACE_FETCH_MAX_ATTEMPTS:-30}"
export PROMPTFOO_TRACE_FETCH_RETRY_DELAY_MS="${PROMPTFOO_TRACE_FETCH_RETRY_DELAY_MS:-500}"
cd "$HERE"
run_config() {  # config, results file
    set +e
    "$PROMPTFOO_BIN" eval -c "$1" -o "$2" --no-cache --no-share --no-progress-bar -j 4
    local rc=$?
    set -e
    echo "promptfoo exit code $rc on $1 (100: some assertions failed, as this example intends)"
    [ "$rc" = 0 ] || [ "$rc" = 100 ]
}
if [ $# -gt 0 ]; then
    run_config "$1" results.json
else
    run_config refund_desk.yaml results.json
    run_config final_state.yaml final_state_results.json
fi
