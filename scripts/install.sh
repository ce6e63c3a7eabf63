#!/usr/bin/env bash
# Creates the virtual environment and installs trajcheck with everything its tests use.
# Kept in one script so `make` and .ci/run install exactly the same things.
set -euo pipefail
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -e '.[dev,sql,langchain,deepeval,ragas,langsmith]'
