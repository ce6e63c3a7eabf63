"""Google ADK writes the trace: a real ADK ``InMemoryRunner`` run on a scripted ``BaseLlm``
(tests/adk_scripted_run.py) with a parallel pair, a failed booking that is retried, and
usage per model call; its session dump is read exactly. ADK pins OpenTelemetry versions that
conflict with the main environment's, so the run happens in a separate virtual environment
that scripts/adk_venv.sh builds (once; kept in .cache/adk-venv)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from trajcheck.model import Usage
from trajcheck.read.traces import load

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def adk_python() -> str:
    out = subprocess.run(["bash", str(ROOT / "scripts" / "adk_venv.sh")], cwd=ROOT, capture_output=True, text=True,
                         timeout=1200)
    assert out.returncode == 0, out.stderr[-2000:]
    return str(ROOT / out.stdout.strip().splitlines()[-1])


def test_adk_session_read_exactly(adk_python, tmp_path) -> None:
    run = subprocess.run([adk_python, str(ROOT / "tests" / "adk_scripted_run.py")], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    p = tmp_path / "session.json"
    p.write_text(run.stdout)
    res = load(p)
    assert res.formats == {"vertex": 1} and res.problems == []
    t = res[0]
    assert [(c.name, c.args) for c in t.tool_calls()] == [
        ("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Bergen"}), ("book", {"day": "mon"}),
        ("book", {"day": "tue"})]
    assert [len(s.tool_calls) for s in t.steps if s.tool_calls] == [2, 1, 1]
    ids = [c.call_id for c in t.tool_calls()]
    assert all(i and i.startswith("adk-") for i in ids) and len(set(ids)) == 4
    rs = t.tool_results()
    assert [r.call_id for r in rs] == ids
    assert [r.is_error for r in rs][2] is True and rs[2].error == "Monday is full"
    assert "booked tue" in str(rs[3].output) and not rs[3].is_error
    assert [s.usage for s in t.steps if s.usage] == [
        Usage(input_tokens=i, output_tokens=o, total_tokens=i + o) for i, o in [(50, 12), (80, 9), (95, 9), (110, 7)]]
    assert t.total_usage == Usage(input_tokens=335, output_tokens=37, total_tokens=372)
    assert t.final_response == "Booked Tuesday; Oslo is 12C." and t.user_input == "Book a slot and tell me the weather"
