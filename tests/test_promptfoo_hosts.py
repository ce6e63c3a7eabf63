"""trajcheck in the real promptfoo CLI, every cell of the metric x host table, and from a wheel.

1. ``examples/promptfoo/refund_desk.yaml`` (the eight recorded refund-desk runs): every row
   metric is a named score on every run and every trajectory mode of every dialect on one run;
   each score in promptfoo's results.json must equal the core function's (``core_value`` of
   tests/test_host_table.py); promptfoo's own ``tool-call-f1`` reads the calls in trajcheck's
   provider output; the summary hook's suite figures equal the core's.
   ``examples/promptfoo/final_state.yaml``: final state from the sandbox fixture
   ``examples/refund_desk/shop.sql``, the agent working on a real sandbox; each score equals the
   core's (``fixture_core_values`` of tests/test_host_examples.py).
2. The built wheel installed into a fresh virtual environment (no source checkout on the path)
   runs ``examples/promptfoo/promptfooconfig.yaml`` copied to a temporary folder, through the
   entry files ``python -m trajcheck.promptfoo init`` writes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from test_host_table import (  # noqa: E402  (tests/ is on sys.path)
    AFTER,
    CASES,
    FIXTURE,
    FIXTURE_WANT,
    MACRO_F1,
    REFUND_ORDER,
    RUNS,
    core_value,
)
from test_promptfoo_cli import _install, _port_free, pytestmark  # noqa: F401,E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "promptfoo"


def _env(paths: dict[str, str], tmp: Path, python: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "PATH": paths["NODE22_BIN"] + os.pathsep + env.get("PATH", ""),
        "HOME": str(tmp / "home"), "PROMPTFOO_CONFIG_DIR": str(tmp / "promptfoo-config"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_DISABLE_SHARING": "1", "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1",
        # promptfoo polls its trace store 6 x 250 ms for the provider's spans by default; on a
        # loaded 2-core CI the spans landed later and trajectory:* saw "Actual tools: (none)"
        "PROMPTFOO_TRACE_FETCH_MAX_ATTEMPTS": "30", "PROMPTFOO_TRACE_FETCH_RETRY_DELAY_MS": "500",
        "PROMPTFOO_PYTHON": python,
    })
    env.pop("PYTHONPATH", None)
    return env


def test_refund_desk_every_cell_in_the_promptfoo_cli(tmp_path):
    paths = _install()
    out = tmp_path / "results.json"
    env = _env(paths, tmp_path, sys.executable)
    env["TRAJCHECK_SUMMARY_OUT"] = str(tmp_path / "summary.json")
    cmd = [paths["PROMPTFOO_BIN"], "eval", "-c", str(EXAMPLE / "refund_desk.yaml"), "-o", str(out),
           "--no-cache", "--no-share", "--no-progress-bar", "-j", "4"]
    p = subprocess.run(cmd, cwd=EXAMPLE, env=env, capture_output=True, text=True, timeout=1500)
    assert p.returncode == 100, f"rc {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    rows = {r["testCase"]["description"]: r for r in json.loads(out.read_text())["results"]["results"]}
    assert set(rows) == set(CASES)
    from trajcheck.adapters import _catalog

    n = composites = not_applicable = 0
    for cid, row in rows.items():
        assert not row.get("error") or row["failureReason"] == 1, row.get("error")
        counted: list[float] = []  # the scores trajcheck_scoring.score_test averages
        na_labels: set[str] = set()
        seen: set[str] = set()
        for comp in row["gradingResult"]["componentResults"]:
            a = comp.get("assertion") or {}
            # promptfoo flattens an assertion's own componentResults after it, with its assertion
            first = json.dumps(a, sort_keys=True) not in seen
            seen.add(json.dumps(a, sort_keys=True))
            if a.get("type") == "tool-call-f1":  # promptfoo's own, on trajcheck's provider output
                assert comp["pass"] is True and comp["score"] == 1, comp["reason"]
                continue
            if a.get("type") not in ("python", "not-python") or "metric" not in (a.get("config") or {}):
                continue
            cfg = a["config"]
            key = cfg["metric"]
            if a["type"] == "not-python":  # no_delete: F1 against [delete_order] is 0 -> 1 - 0
                assert (comp["pass"], comp["score"]) == (True, 1), comp
                counted += [comp["score"]] if first else []
                continue
            want = core_value(key, RUNS[cid], CASES[cid], cfg.get("mode"), cfg.get("dialect"))
            if want is None:  # not applicable: passes, saying so, and is left out of the score
                assert (comp["pass"], comp["score"]) == (True, 1), (cid, a["metric"])
                assert "not applicable, not counted" in comp["reason"]
                assert comp["metadata"]["trajcheck"]["not_applicable"] is True
                na_labels.add(a["metric"])
                not_applicable += 1
            else:
                # a rate where lower is better scores 1 - rate (promptfoo averages scores as
                # higher-is-better); its raw value is the named score <label>.rate
                lower = _catalog.row_metric(key, "metric").lower_is_better
                assert comp["score"] == pytest.approx(1 - want if lower else want, abs=1e-15), \
                    (cid, a["metric"], comp["reason"])
                if lower:
                    assert row["namedScores"][f"{a['metric']}.rate"] == pytest.approx(want, abs=1e-15)
                counted += [comp["score"]] if first else []
            if key == "composite" and cid in REFUND_ORDER:  # refund e-mail before the refund
                assert (comp["score"], comp["pass"]) == (REFUND_ORDER[cid], cid == "order_kept"), comp
                composites += 1
            n += 1
        # the test's score and named scores leave the not-applicable assertions out
        # (defaultTest.assertScoringFunction: trajcheck_scoring.py:score_test); other assertions
        # of this suite have weight 1 and no threshold
        others = [c for c in row["gradingResult"]["componentResults"]
                  if (c.get("assertion") or {}).get("type") == "tool-call-f1"
                  or ((c.get("assertion") or {}).get("type") == "python"
                      and "metric" not in ((c.get("assertion") or {}).get("config") or {}))]
        counted += [c["score"] for c in others]
        assert row["score"] == pytest.approx(sum(counted) / len(counted), abs=1e-12), cid
        assert not na_labels & set(row["namedScores"]), (cid, na_labels & set(row["namedScores"]))
    assert composites == 2
    assert not_applicable >= 8  # error_recovery on every run without a failed call, at least
    assert n >= 8 * 20 + 30  # every row metric on every run, the modes on one
    summary = json.loads((tmp_path / "summary.json").read_text())
    from trajcheck.metrics.reliability import pass_hat_k, success_rate
    from trajcheck.score.suite import run_outcome

    trials = {c: [bool(run_outcome(RUNS[c], CASES[c]).passed)] for c in CASES}
    assert summary["figures"]["pass_hat_k"]["score"] == pass_hat_k(trials, 1)
    ok = sum(v[0] for v in trials.values())
    assert summary["figures"]["success_rate"]["score"] == success_rate(ok, len(CASES)).score
    # routes from vars.expected_route against the first tool called: macro-F1 0.35 by hand
    # (tests/test_host_table.py ROUTES / MACRO_F1)
    assert summary["figures"]["routing_macro_f1"]["score"] == pytest.approx(MACRO_F1)


def test_refund_desk_final_state_from_a_sandbox_fixture_in_the_promptfoo_cli(tmp_path):
    from test_host_examples import FIXTURE_WANT, fixture_core_values

    paths = _install()
    out = tmp_path / "results.json"
    cmd = [paths["PROMPTFOO_BIN"], "eval", "-c", str(EXAMPLE / "final_state.yaml"), "-o", str(out),
           "--no-cache", "--no-share", "--no-progress-bar", "-j", "1"]
    p = subprocess.run(cmd, cwd=EXAMPLE, env=_env(paths, tmp_path, sys.executable), capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 100, f"rc {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    rows = {r["testCase"]["description"]: r for r in json.loads(out.read_text())["results"]["results"]}
    want = fixture_core_values()
    assert want == FIXTURE_WANT
    got = {}
    for cid, row in rows.items():
        (comp,) = row["gradingResult"]["componentResults"]
        got[cid] = (comp["score"], comp["pass"])
        assert row["namedScores"]["final_state"] == comp["score"]
    assert got == {cid: (w, w == 1.0) for cid, w in want.items()}, got
    assert "table orders: 1 row removed" in rows["fixture_deleted"]["gradingResult"]["componentResults"][0]["reason"]


_AGENT = """
import json


def run(prompt, vars):
    # one refund, recorded with no database snapshots: the before state comes from the fixture
    call = {"id": "c1", "type": "function",
            "function": {"name": "issue_refund", "arguments": json.dumps({"order_id": "981", "amount": 40})}}
    return [{"role": "user", "content": prompt},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "refunded"},
            {"role": "assistant", "content": "Your refund of 40 USD is done."}]
"""


def test_per_assertion_conventions_and_fixture_final_state_in_the_promptfoo_cli(tmp_path):
    """Each assertion on its own: a missing reference or a score that does not apply fails that
    assertion (pass false, score 0, the reason saying why), negated or not -- what promptfoo
    0.123.1 itself does with a Python assertion that cannot run (``handlePython`` returns
    pass false, score 0 for a raising script, whatever ``not-``); promptfoo has no skipped state
    for an assertion. The other assertions of the same test are scored as usual. Final state
    from the case's sandbox fixture (``initial_state``) and the ``after_state`` given."""
    import yaml

    paths = _install()
    (tmp_path / "fixture_agent.py").write_text(_AGENT)
    asserted = str(EXAMPLE / "trajcheck_assert.py")

    def a(label: str, cfg: dict, typ: str = "python") -> dict:
        return {"type": typ, "value": f"file://{asserted}", "metric": label, "config": cfg}
    fs = {"initial_state": str(FIXTURE), "expected_final_state": {"refunds": [{"order_id": "981"}]}}
    config = {
        "description": "trajcheck per-assertion conventions",
        "prompts": ["{{request}}"],
        "providers": [{"id": f"file://{EXAMPLE / 'trajcheck_provider.py'}",
                       "config": {"agent": "fixture_agent.py:run"}}],
        "tests": [{"description": "refund", "vars": {"request": "Refund order 981 (40 USD)."},
                   "assert": [
                       a("f1", {"metric": "tool_call_f1", "expected_calls": ["issue_refund"]}),
                       a("order_missing", {"metric": "ordering_accuracy"}),
                       a("order_missing_negated", {"metric": "ordering_accuracy", "threshold": 1.0}, "not-python"),
                       a("recovery_na", {"metric": "error_recovery"}),
                       a("recovery_na_negated", {"metric": "error_recovery", "threshold": 1.0}, "not-python"),
                       # python and not-python with one config: negation cannot be told, both fail
                       a("same_py", {"metric": "tool_call_f1", "expected_calls": ["lookup_order"]}),
                       a("same_not", {"metric": "tool_call_f1", "expected_calls": ["lookup_order"]}, "not-python"),
                       a("fixture_ok", {"metric": "final_state", **fs, "after_state": AFTER["fixture_ok"]}),
                       a("fixture_bad", {"metric": "final_state", **fs, "after_state": AFTER["fixture_bad"]}),
                   ]}],
    }
    (tmp_path / "pf.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    out = tmp_path / "results.json"
    env = _env(paths, tmp_path, sys.executable)
    cmd = [paths["PROMPTFOO_BIN"], "eval", "-c", str(tmp_path / "pf.yaml"), "-o", str(out),
           "--no-cache", "--no-share", "--no-progress-bar"]
    p = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 100, f"rc {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    (row,) = json.loads(out.read_text())["results"]["results"]
    assert row["failureReason"] == 1  # failed assertions, not an errored test
    comps = {}
    for c in row["gradingResult"]["componentResults"]:
        comps.setdefault((c.get("assertion") or {}).get("metric"), c)
    got = {k: (c["pass"], c["score"]) for k, c in comps.items()}
    assert got == {"f1": (True, 1), "order_missing": (False, 0), "order_missing_negated": (False, 0),
                   "recovery_na": (True, 1), "recovery_na_negated": (True, 1),
                   "same_py": (False, 0), "same_not": (False, 0),
                   "fixture_ok": (True, FIXTURE_WANT["fixture_ok"]),
                   "fixture_bad": (False, FIXTURE_WANT["fixture_bad"])}, got
    assert "needs 'precedence'" in comps["order_missing"]["reason"]
    assert "not applicable" in comps["recovery_na"]["reason"]
    assert "negation cannot be told apart" in comps["same_not"]["reason"]
    assert "1 row removed" in comps["fixture_bad"]["reason"]
    named = row["namedScores"]
    assert named["order_missing"] == 0 and named["fixture_ok"] == 1


def _setuptools_path() -> str | None:
    """A sys.path entry holding setuptools >= 77 (pyproject's build requirement), or None."""
    from importlib.metadata import PathDistribution

    for entry in sys.path:
        for d in Path(entry).glob("setuptools-*.dist-info") if Path(entry).is_dir() else ():
            v = PathDistribution(d).version
            if int(v.split(".")[0]) >= 77:
                return entry
    return None


def test_wheel_in_a_fresh_venv_runs_the_promptfoo_example(tmp_path):
    paths = _install()
    if not _port_free(4318):
        pytest.fail("port 127.0.0.1:4318 (the example's OTLP receiver) is in use")
    # build the wheel from a copy of the sources (nothing written into the checkout)
    src = tmp_path / "src"
    for part in ("core", "adapters", "promptfoo_provider"):
        shutil.copytree(ROOT / part, src / part, ignore=shutil.ignore_patterns("__pycache__"))
    for f in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / f, src / f)
    st = _setuptools_path()
    assert st is not None, "no setuptools >= 77 importable to build the wheel"
    benv = dict(os.environ, PYTHONPATH=st)
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                        "--no-index", "-w", str(tmp_path / "dist"), str(src)],
                       capture_output=True, text=True, env=benv, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("trajcheck-*.whl")
    # a fresh venv; trajcheck's four dependencies come from this interpreter's site-packages
    # (a .pth line adds that folder only: its own .pth files, e.g. an editable trajcheck, are
    # not processed), so no source checkout is importable
    vdir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(vdir)
    py = str(vdir / "bin" / "python")
    p = subprocess.run([py, "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    import jsonschema

    site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True).stdout.strip()
    Path(site, "_deps.pth").write_text(str(Path(jsonschema.__file__).parents[1]) + "\n")
    # the checkout's own folders must not be importable (the deps' site-packages may lie
    # inside the checkout, as .venv does under `make test`, so no prefix test)
    src_dirs = sorted(str(ROOT / d) for d in ("", "core", "adapters", "promptfoo_provider"))
    chk = subprocess.run([py, "-c", "import os, sys, trajcheck, trajcheck.promptfoo.assertion as a; "
                                    f"print(a.__file__); print(any(os.path.abspath(p or '.') in {src_dirs!r} "
                                    "for p in sys.path))"],
                         capture_output=True, text=True, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=""))
    assert chk.returncode == 0, chk.stderr
    where, leak = chk.stdout.split()
    assert where.startswith(str(vdir)) and leak == "False", chk.stdout
    # the example, copied out of the checkout; entry files written by the installed package
    ex = tmp_path / "project"
    shutil.copytree(EXAMPLE, ex, ignore=shutil.ignore_patterns("results.json", "trajcheck-summary.json",
                                                               "trajcheck_*.py", "__pycache__"))
    init = subprocess.run([py, "-m", "trajcheck.promptfoo", "init", str(ex)], capture_output=True, text=True)
    # the assertion, provider, summary hook and test scoring function
    assert init.returncode == 0 and init.stdout.count("wrote") == 4, init.stdout + init.stderr
    out = tmp_path / "results.json"
    env = _env(paths, tmp_path, py)
    p = subprocess.run([paths["PROMPTFOO_BIN"], "eval", "-c", str(ex / "promptfooconfig.yaml"), "-o", str(out),
                        "--no-cache", "--no-share", "--no-progress-bar", "-j", "1"],  # see test_promptfoo_cli
                       cwd=ex, env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 100, f"rc {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    data = json.loads(out.read_text())
    stats = data["results"]["stats"]
    assert (stats["successes"], stats["failures"], stats["errors"]) == (2, 1, 0)
    rows = {r["testCase"]["description"]: r for r in data["results"]["results"]}
    f1 = [c for c in rows["cancels a booking (fails)"]["gradingResult"]["componentResults"]
          if (c.get("assertion") or {}).get("metric") == "tool_f1"]
    assert f1 and f1[0]["score"] == 0.5  # hand-computed in the example: P = R = 1/2
