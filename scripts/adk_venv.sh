#!/usr/bin/env bash
# A separate virtual environment for Google ADK: google-adk pins OpenTelemetry versions that
# conflict with the main environment's, so its trace-producing test runs ADK in this venv
# (tests/test_sdk_traces_adk.py) and reads the result in the main one.
# Usage: scripts/adk_venv.sh [VENV]   (default .cache/adk-venv); prints the venv's python.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${1:-.cache/adk-venv}
PYTHON=${PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import google.adk" >/dev/null 2>&1; then
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install -q "google-adk==2.13.0" >/dev/null
fi
echo "$VENV/bin/python"
