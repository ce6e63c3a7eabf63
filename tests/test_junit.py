"""`eval`/`run --junit`: JUnit XML validated against the common Ant/JUnit schema (windyroad's
JUnit.xsd, tests/data/junit, Apache-2.0) with xmlschema, and read back with junitparser, the
JUnit consumer library, on real tau-bench runs (issue 30, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajcheck.cli import main
from trajcheck.errors import TrajcheckError
from trajcheck.report.junit import to_junit, unscored
from trajcheck.report.runs import reasons
from trajcheck.report.scorecard import Scorecard

xmlschema = pytest.importorskip("xmlschema")
junitparser = pytest.importorskip("junitparser")

ROOT = Path(__file__).resolve().parents[1]
XSD = Path(__file__).parent / "data" / "junit" / "JUnit.xsd"
AIRLINE = ROOT / "examples" / "tau_bench_airline" / "gpt-4o-airline.json"
CRASHES = Path(__file__).parent / "data" / "real_traces" / "tau_bench" / "avaljotsingh_assertions-agent_range_90-100.json"
HD = ROOT / "examples" / "helpdesk"


def _schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(XSD))


def _suite(path: Path) -> junitparser.TestSuite:
    """The document's one testsuite, as junitparser reads it (it wraps a root testsuite)."""
    doc = junitparser.JUnitXml.fromfile(str(path))
    (suite,) = list(doc)
    assert isinstance(suite, junitparser.TestSuite)
    return suite


def _cases(path: Path) -> list[junitparser.TestCase]:
    return list(_suite(path))


def _eval(tmp: Path, traces: Path, *extra: str) -> tuple[Path, dict]:
    xml, js = tmp / "out.xml", tmp / "sc.json"
    r = CliRunner().invoke(main, ["eval", str(traces), "--junit", str(xml), "--json", str(js),
                                  "-q", *extra])
    assert r.exit_code == 0, r.output
    return xml, json.loads(js.read_text())


@pytest.fixture(scope="module")
def airline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """`eval` of the 200 tau-bench airline runs with --junit and --json, once."""
    return _eval(tmp_path_factory.mktemp("airline"), AIRLINE)


def test_eval_airline_200_testcases_116_failures(airline):
    xml, sc = airline
    _schema().validate(str(xml))
    suite = _suite(xml)
    # the scorecard's own counts: 200 runs, 84 successes
    assert (sc["suite"]["n_runs"], sc["suite"]["n_successes"]) == (200, 84)
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (200, 116, 0, 0)
    cases = list(suite)
    assert len(cases) == 200
    failed = [c for c in cases if not c.is_passed]
    assert len(failed) == 116 == sum(not r["success"] for r in sc["runs"])
    runs = {(r["case_id"], r["trial"]): r for r in sc["runs"]}
    for c in cases:
        cid, _, trial = c.name.partition(" trial ")
        assert c.classname == cid
        r = runs[(cid, int(trial))]
        assert c.is_passed == r["success"]
    # run 0-0 fails on the payment amount; its failure holds every reason of the run
    c00 = next(c for c in cases if c.name == "0 trial 0")
    (fail,) = c00.result
    assert isinstance(fail, junitparser.Failure)
    assert fail.message.startswith("case '0': expected call 0 (book_reservation) not matched")
    full = reasons(Scorecard.load(xml.with_name("sc.json")).run("0-0"))
    assert fail.text.split("\n") == full and len(full) == 2
    props = {p.name: p.value for p in suite.properties()}
    assert props["trajcheck.task_success_rate"] == "0.42"
    assert props["trajcheck.pass^4"] == "0.2" and props["trajcheck.pass@4"] == "0.72"
    assert props["trajcheck.n_runs"] == "200"


def test_junit_lists_every_run_even_with_keep_runs(tmp_path):
    xml, sc = _eval(tmp_path, AIRLINE, "--keep-runs", "5")
    assert len(sc["runs"]) == 200  # --junit lists every run
    assert len(_cases(xml)) == 200
    # a scorecard written with a limit cannot make complete JUnit XML: said, not cut short
    js = tmp_path / "cut.json"
    r = CliRunner().invoke(main, ["eval", str(AIRLINE), "--keep-runs", "5", "--json", str(js), "-q"])
    assert r.exit_code == 0
    with pytest.raises(TrajcheckError, match="lists 5 of its 200 runs.*--keep-runs 0"):
        to_junit(Scorecard.load(js))


def test_crash_records_are_skipped_testcases(tmp_path):
    xml, sc = _eval(tmp_path, CRASHES)
    _schema().validate(str(xml))
    suite = _suite(xml)
    # 10 records: 5 crashed (info.error), 5 ran and failed
    assert (suite.tests, suite.failures, suite.skipped) == (10, 5, 5)
    skipped = [c for c in suite if c.is_skipped]
    assert sorted(c.name.rsplit(" ", 1)[-1] for c in skipped) == ["0", "2", "4", "6", "9"]
    assert all(c.classname == "(not scored)" for c in skipped)
    assert "Token limit is exceeded" in skipped[0].result[0].message


def test_unscored_reads_case_ids_of_every_not_scored_problem():
    probs = ["case 'a b': no traces; not scored", "case \"it's\": no runs; not scored",
             "trace 3 (run r-1): case id 'zz' is not among the cases; not scored",
             "trace 4 (run #4): no case_id in its metadata; not scored",
             "x.json record 1: traj[4]: tool message has no 'tool_call_id'; paired by position"]
    got = unscored(probs)
    assert [g[0] for g in got] == ["a b", "it's", "zz", None]
    assert [g[1] for g in got] == ["case 'a b'", "case \"it's\"", "trace 3 (run r-1)",
                                   "trace 4 (run #4)"]


def test_hostile_text_stays_valid_xml(tmp_path, airline):
    """Case ids and reasons with NUL, escape sequences, XML non-characters, CDATA ends and
    markup: the document stays schema-valid and reads back with the text escaped."""
    sc = Scorecard.load(airline[0].with_name("sc.json"))
    bad = "c\x00<x>]]>&\x1b[2J\ufffe\u202e"
    r0 = sc.runs[0]
    from dataclasses import replace

    runs = (replace(r0, case_id=bad, failure_reason="leak \x07 " + "y" * 5000,
                    metrics={}, outcome_reason="o\x00"),) + sc.runs[1:]
    sc2 = replace(sc, runs=runs, problems=(f"case {bad!r}: no traces; not scored",))
    xml = tmp_path / "bad.xml"
    xml.write_text(to_junit(sc2), encoding="utf-8")
    _schema().validate(str(xml))
    suite = _suite(xml)
    assert (suite.tests, suite.skipped) == (201, 1)
    first = next(iter(suite))
    assert first.classname == "c\\x00<x>]]>&\\x1b[2J\\ufffe\\u202e"
    assert first.result[0].message == "o\\x00"  # metrics gone: the outcome reason
    skip = [c for c in suite if c.is_skipped][0]
    assert skip.classname == first.classname


def test_run_junit_matches_the_scorecard(tmp_path):
    xml, js = tmp_path / "run.xml", tmp_path / "run.json"
    r = CliRunner().invoke(main, ["run", "--agent", f"{HD / 'agents.py'}:duplicate_agent",
                                  "--cases", str(HD / "cases.jsonl"), "--trials", "2",
                                  "--isolation", "inline", "--no-progress", "-q",
                                  "--json", str(js), "--junit", str(xml)])
    assert r.exit_code == 0, r.output
    _schema().validate(str(xml))
    sc = json.loads(js.read_text())
    suite = _suite(xml)
    n_fail = sum(not x["success"] for x in sc["runs"])
    assert suite.tests == sc["suite"]["n_runs"] == 50
    assert suite.failures == n_fail > 0
    names = sorted(c.name for c in suite)
    assert names == sorted(f"{x['case_id']} trial {x['trial']}" for x in sc["runs"])
