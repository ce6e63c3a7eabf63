#!/usr/bin/env bash
# Regenerate tests/data/sdk_traces/<sdk>/ with the real SDKs: each producer in its own virtual
# environment (SDK_VENVS/<sdk>, made on first use from requirements/<sdk>.txt, pinned), the
# scenario of scenario.py, a scripted model (no network). Usage: run.sh [sdk ...] (default: all).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venvs="${SDK_VENVS:-$root/.sdk-venvs}"
PYTHON="${PYTHON:-python3}"
sdks=("$@")
[ ${#sdks[@]} -gt 0 ] || sdks=(smolagents autogen langchain google_genai bedrock_converse cohere_v2 mistral haystack haystack_otel haystack2_toolinvoker semantic_kernel llamaindex llamaindex_events litellm openai_responses adk crewai crewai_hierarchical ag2 strands traceloop)
for sdk in "${sdks[@]}"; do
  v="$venvs/$sdk"
  # langchain-core is a test dependency of trajcheck itself: its producer runs in the project venv
  [ "$sdk" = langchain ] && v="${VENV:-$root/.venv}"
  # the LlamaIndex event log is written by the LlamaIndex producer's environment
  [ "$sdk" = llamaindex_events ] && v="$venvs/llamaindex"
  # the hierarchical crew runs in the CrewAI producer's environment
  [ "$sdk" = crewai_hierarchical ] && v="$venvs/crewai"
  if [ ! -x "$v/bin/python" ]; then
    "$PYTHON" -m venv "$v"
    # traceloop-sdk's own dependency list names every instrumentation it knows (no resolvable set):
    # its pinned environment is installed as listed, without resolving
    if [ "$sdk" = traceloop ]; then "$v/bin/pip" install -q --no-deps -r "$here/requirements/$sdk.txt"
    else "$v/bin/pip" install -q -r "$here/requirements/$sdk.txt"; fi
  fi
  (cd "$root" && "$v/bin/python" "$here/${sdk}_run.py")
done
