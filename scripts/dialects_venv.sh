#!/usr/bin/env bash
# A separate virtual environment with the frameworks whose trajectory scorers the dialect
# differential tests (tests/test_differential_dialects.py) run for real but whose pins
# conflict with the main environment's: google-adk (OpenTelemetry), strands-agents-evals
# (OpenTelemetry 1.45.1), pydantic-evals (pydantic-ai-slim==2.62.0), azure-ai-evaluation
# (pandas<3); mlflow-skinny beside ADK for MLflow's ToolTrajectory wrapper. The tests send cases to tests/dialect_scorers.py running in this venv.
# Usage: scripts/dialects_venv.sh [VENV]   (default .cache/dialects-venv); prints the venv's python.
# Installed with scripts/dialects_constraints.txt (the set the tests passed with).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${1:-.cache/dialects-venv}
PYTHON=${PYTHON:-python3}
PKGS=("google-adk==2.13.0" "pydantic-evals==2.62.0" "strands-agents-evals==1.7.0" "azure-ai-evaluation==1.18.10"
      "mlflow-skinny==3.17.2")
CHECK="import google.adk.evaluation.trajectory_evaluator, pydantic_evals.evaluators, strands_evals.tools.evaluation_tools, azure.ai.evaluation, mlflow.genai.scorers.google_adk"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "$CHECK" >/dev/null 2>&1; then
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install -q -c scripts/dialects_constraints.txt "${PKGS[@]}" >/dev/null
fi
echo "$VENV/bin/python"
