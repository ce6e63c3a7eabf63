"""``--fixture-root`` / ``fixture_roots`` on every path that opens a case's fixture: ``trajcheck
run --cases``, ``trajcheck run --scenarios`` and ``trajcheck.run.simulated_user``. A fixture outside the
dataset's folder is refused (SecurityError, exit 2) unless its folder is allowed explicitly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajcheck.cli.app import main
from trajcheck.errors import SecurityError
from trajcheck.judges import CallableModel
from trajcheck.run.runner import load_agent
from trajcheck.run.simulated_user import load_scenarios, run_scenarios, simulate

ROOT = Path(__file__).resolve().parents[1]
HD = ROOT / "examples" / "helpdesk"
FIXTURE = HD / "fixtures" / "helpdesk.sql"


def _scenarios_elsewhere(tmp: Path) -> Path:
    """The help-desk scenarios in a folder of their own, their fixture named by absolute path
    (so it lies outside the scenarios file's folder)."""
    ds = tmp / "ds"
    ds.mkdir()
    text = (HD / "scenarios.yaml").read_text(encoding="utf-8")
    assert text.count("initial_state: fixtures/helpdesk.sql") == 2
    p = ds / "scenarios.yaml"
    p.write_text(text.replace("initial_state: fixtures/helpdesk.sql", f"initial_state: {FIXTURE}"),
                 encoding="utf-8")
    return p


def _run_scenarios_cli(tmp: Path, scen: Path, *extra: str) -> tuple[int, str, Path]:
    out = tmp / "sc.json"
    r = CliRunner().invoke(main, ["run", "--agent", f"{HD / 'agents.py'}:good_agent", "--scenarios",
                                  str(scen), "--user-model", f"{HD / 'users.py'}:scripted_user",
                                  "-q", "--json", str(out), *extra])
    return r.exit_code, r.output, out


def test_run_scenarios_refuses_a_fixture_outside_its_folder(tmp_path: Path) -> None:
    scen = _scenarios_elsewhere(tmp_path)
    code, out, js = _run_scenarios_cli(tmp_path, scen)
    assert code == 2, out
    assert f"fixture {str(FIXTURE)!r} is outside the dataset's folder ({scen.parent})" in " ".join(out.split())
    assert not js.exists()


def test_run_scenarios_fixture_root_allows_that_folder(tmp_path: Path) -> None:
    scen = _scenarios_elsewhere(tmp_path)
    code, out, js = _run_scenarios_cli(tmp_path, scen, "--fixture-root", str(FIXTURE.parent))
    assert code == 0, out
    sc = json.loads(js.read_text())
    assert sc["suite"]["n_runs"] == 2
    assert all(r["success"] for r in sc["runs"])  # the good agent on the real fixture, as in examples/


def test_simulate_api_takes_fixture_roots(tmp_path: Path) -> None:
    import importlib.util

    scen = _scenarios_elsewhere(tmp_path)
    s = load_scenarios(scen)[0]
    good = load_agent(f"{HD / 'agents.py'}:good_agent")  # tools: its module's TOOLS
    users = importlib.util.spec_from_file_location("hd_users_roots", HD / "users.py")
    assert users and users.loader
    umod = importlib.util.module_from_spec(users)
    users.loader.exec_module(umod)
    with pytest.raises(SecurityError, match="outside the dataset's folder"):
        simulate(s, good, CallableModel(umod.helpdesk_user), seeds=[0],
                 base_dir=scen.parent)
    [r] = simulate(s, good, CallableModel(umod.helpdesk_user), seeds=[0],
                   base_dir=scen.parent, fixture_roots=[FIXTURE.parent])
    assert r.trajectory.metadata["state_before"]["tickets"]  # the fixture was loaded
    with pytest.raises(SecurityError):
        run_scenarios([s], good, CallableModel(umod.helpdesk_user),
                      base_dir=scen.parent)
