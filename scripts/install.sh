#!/usr/bin/env bash
# Creates the virtual environment and installs trajcheck with everything its tests use, or,
# with the argument `core` (what `make demo` needs), trajcheck alone: its core dependencies
# (jsonschema, click, rich, PyYAML, google-re2, and orjson, jsonschema-rs, numpy,
# threadpoolctl, zstandard for eval's fast path), no framework, no torch.
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
# httpx, the agent SDKs, Spark, Ray, OpenTelemetry) and the dev tools: the tests run against
# the real frameworks. scripts/constraints.txt pins the versions the suite last passed with:
# left free, pip backtracks for tens of minutes through boto3/botocore releases (pulled in by
# inspect-ai and mlflow). Regenerate it with `.venv/bin/pip freeze --exclude-editable` after
# changing an extra.
"$VENV/bin/python" -m pip install -q -c scripts/constraints.txt -e '.[all,dev]'
