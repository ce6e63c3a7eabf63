#!/usr/bin/env bash
# Creates the virtual environment and installs trajcheck with everything its tests use, or,
# with the argument `core` (what `make demo` needs), trajcheck alone: its four small
# dependencies (jsonschema, click, rich, PyYAML), no framework, no torch.
# Kept in one script so `make` and .ci/run install exactly the same things.
set -euo pipefail
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
if [ "${1:-all}" = core ]; then
  "$VENV/bin/python" -m pip install -q -e .
  exit 0
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
# torch first, pinned: 2.13.0 is a CPU build pip takes from this machine's disk. Left to
# sentence-transformers, pip would pick a newer multi-GB CUDA build.
"$VENV/bin/python" -m pip install -q torch==2.13.0
# Every extra (DeepEval, RAGAS, LangSmith, LangChain, sentence-transformers, SQLAlchemy,
# httpx) and the dev tools: the tests run against the real frameworks.
"$VENV/bin/python" -m pip install -q -e '.[all,dev]'
