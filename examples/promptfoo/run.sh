#!/usr/bin/env bash
# One command, offline: bash examples/promptfoo/run.sh [config.yaml]
# Installs Node 22 + promptfoo into .cache/ once (scripts/install_promptfoo.sh), then runs
# promptfoo on refund_desk.yaml (default) with the Python that has trajcheck (PROMPTFOO_PYTHON,
# else the repository's .venv). Writes results.json and trajcheck-summary.json here. promptfoo
# exits 100 when any assertion fails; several fail on purpose in this example.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
while IFS='=' read -r k v; do export "$k=$v"; done < <(bash "$ROOT/scripts/install_promptfoo.sh" | grep -E '^[A-Z_0-9]+=')
export PATH="$NODE22_BIN:$PATH"
if [ -z "${PROMPTFOO_PYTHON:-}" ]; then
    if [ -x "$ROOT/.venv/bin/python" ]; then PROMPTFOO_PYTHON="$ROOT/.venv/bin/python"; else PROMPTFOO_PYTHON="$(command -v python3)"; fi
fi
export PROMPTFOO_PYTHON
cd "$HERE"
set +e
"$PROMPTFOO_BIN" eval -c "${1:-refund_desk.yaml}" -o results.json --no-cache --no-share --no-progress-bar -j 4
rc=$?
set -e
echo "promptfoo exit code $rc (100: some assertions failed, as this example intends)"
[ "$rc" = 0 ] || [ "$rc" = 100 ]
