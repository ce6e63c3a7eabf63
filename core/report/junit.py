"""A scorecard as JUnit XML, the test report every CI system shows (``eval``/``run --junit``).

One ``<testsuite>`` (the layout of the common Ant/JUnit schema, which Jenkins, GitLab, GitHub
test-report actions and Azure read):

- one ``<testcase>`` per run: ``classname`` the case id, ``name`` the case and trial
  (``"<case> trial <t>"``), ``time`` the run's latency in seconds (0 when not recorded);
- a ``<failure>`` in each run whose task failed (``RunResult.success`` False, the same
  count as the scorecard's failed runs), its message the first reason and its text every
  reason (``report.runs.reasons``), each cut at ``REASON_CHARS`` characters;
- a ``<skipped>`` testcase for each run or case the evaluation did not score (crash records,
  cases without runs, runs of unknown cases: the scorecard problems that say "not scored" or
  "not an agent run"), classname the case id when the problem names one;
- the headline figures as ``<properties>`` (task success rate with its interval, pass^k and
  pass@k, mean F1, runs, cases, source).

A run that passed its task but failed the composite gate is a passing testcase (pass^k and
the failure count stay on task success) whose ``system-out`` names the gate failure.
Text from traces is made safe for XML: characters XML 1.0 cannot hold are written as escapes.
"""

from __future__ import annotations

import ast
import datetime as _dt
import re
import socket
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from ..errors import TrajcheckError
from ..textsafe import visible
from .scorecard import RunResult, Scorecard

REASON_CHARS = 2000  # one reason in a failure's text
MESSAGE_CHARS = 500  # a failure's or skip's message attribute

# characters XML 1.0 cannot hold (besides the C0/C1 controls ``visible`` escapes)
_NOT_XML = re.compile("[\ufffe\uffff]")
_CASE_ID = re.compile(r"case(?: id)? ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")
_UNSCORED = ("; not scored", "not an agent run; skipped")


def xml_text(s: Any, limit: int | None = None) -> str:
    """``s`` as text an XML 1.0 document can hold: control characters (but tab and newline)
    and non-characters written as escapes, cut at ``limit`` characters with "... (cut)".

    Args:
        s: any value (``str()`` of it is used).
        limit: the most characters kept (None: no cut).

    Returns:
        The safe text.
    """
    t = _NOT_XML.sub(lambda m: f"\\u{ord(m.group(0)):04x}", visible(s))
    if limit is not None and len(t) > limit:
        t = t[: max(limit - 8, 0)] + " ...(cut)"
    return t


def unscored(problems: tuple[str, ...] | list[str]) -> list[tuple[str | None, str, str]]:
    """The scorecard problems that stand for a run or case not scored, as
    ``(case id or None, location, problem)``: crash records ("not an agent run"), cases with
    no runs or traces, runs of unknown cases or without a case id ("not scored").

    Args:
        problems: ``Scorecard.problems``.

    Returns:
        One triple per such problem, in order.
    """
    out: list[tuple[str | None, str, str]] = []
    for p in problems:
        if not p.endswith(_UNSCORED):
            continue
        m = _CASE_ID.search(p)
        cid: str | None = None
        if m:
            try:
                cid = str(ast.literal_eval(m.group(1)))
            except (ValueError, SyntaxError):
                cid = m.group(1)[1:-1]
        where = p.split(": ", 1)[0]
        out.append((cid, where, p))
    return out


def _num(x: Any) -> str:
    return "" if x is None else repr(x) if isinstance(x, float) else str(x)


def headline(sc: Scorecard) -> dict[str, str]:
    """The suite's headline figures as JUnit property values (full precision, "" for none).

    Args:
        sc: the scorecard.

    Returns:
        ``{name: value}`` in the order they are written.
    """
    s = sc.suite
    t = s.task_success_rate
    out = {"trajcheck.task_success_rate": _num(t.value),
           "trajcheck.task_success_rate.lo": _num(t.lo),
           "trajcheck.task_success_rate.hi": _num(t.hi),
           "trajcheck.n_runs": _num(s.n_runs), "trajcheck.n_cases": _num(s.n_cases),
           "trajcheck.n_successes": _num(s.n_successes)}
    for k, v in sorted(s.pass_hat_k.items()):
        out[f"trajcheck.pass^{k}"] = _num(v)
    for k, v in sorted(s.pass_at_k.items()):
        out[f"trajcheck.pass@{k}"] = _num(v)
    if s.mean_f1 is not None:
        out["trajcheck.mean_f1"] = _num(s.mean_f1.value)
    for key in ("source", "agent", "trajcheck_version", "seed"):
        if sc.meta.get(key) is not None:
            out[f"trajcheck.{key}"] = xml_text(sc.meta[key], MESSAGE_CHARS)
    return out


def _case_name(r: RunResult, i: int) -> str:
    trial = r.trial if r.trial is not None else i
    return xml_text(f"{r.case_id} trial {trial}", MESSAGE_CHARS)


def to_junit(sc: Scorecard, *, name: str = "trajcheck", timestamp: _dt.datetime | None = None,
             hostname: str | None = None) -> str:
    """The scorecard as a JUnit XML document (see the module docstring).

    Args:
        sc: a scorecard that lists every run (``len(sc.runs) == sc.suite.n_runs``).
        name: the testsuite's name.
        timestamp: when the suite ran (default: now, UTC), written without a time zone.
        hostname: default ``socket.gethostname()`` (``localhost`` when empty).

    Returns:
        The XML text (UTF-8 declaration, one testsuite).

    Raises:
        TrajcheckError: the scorecard lists fewer runs than it scored (written with a
            ``--keep-runs`` limit), so testcases would be missing.
    """
    from .runs import reasons

    if len(sc.runs) != sc.suite.n_runs:
        raise TrajcheckError(
            f"the scorecard lists {len(sc.runs)} of its {sc.suite.n_runs} runs (it was written "
            "with a --keep-runs limit); JUnit XML needs every run: score again with --keep-runs 0")
    ts = (timestamp or _dt.datetime.now(_dt.timezone.utc)).strftime("%Y-%m-%dT%H:%M:%S")
    host = xml_text(hostname if hostname is not None else socket.gethostname()) or "localhost"
    skips = unscored(sc.problems)
    failures = sum(not r.success for r in sc.runs)
    total_time = sum((r.latency_ms or 0.0) for r in sc.runs) / 1000.0
    suite = ET.Element("testsuite", {
        "name": xml_text(name, MESSAGE_CHARS) or "trajcheck", "timestamp": ts, "hostname": host,
        "tests": str(len(sc.runs) + len(skips)), "failures": str(failures), "errors": "0",
        "skipped": str(len(skips)), "time": f"{total_time:.3f}"})
    props = ET.SubElement(suite, "properties")
    for k, v in headline(sc).items():
        ET.SubElement(props, "property", {"name": k, "value": v})
    gate_notes: list[str] = []
    for i, r in enumerate(sc.runs):
        tc = ET.SubElement(suite, "testcase", {
            "classname": xml_text(r.case_id, MESSAGE_CHARS), "name": _case_name(r, i),
            "time": f"{(r.latency_ms or 0.0) / 1000.0:.3f}"})
        if not r.success:
            why = [xml_text(x, REASON_CHARS) for x in reasons(r)] or ["task failed"]
            f = ET.SubElement(tc, "failure", {"message": xml_text(why[0], MESSAGE_CHARS),
                                              "type": "trajcheck.task_failed"})
            f.text = "\n".join(why)
        elif r.gate_failed:
            gate_notes.append(f"{_case_name(r, i)}: task passed, composite gate failed: "
                              + xml_text(reasons(r)[-1], REASON_CHARS))
    for cid, where, problem in skips:
        tc = ET.SubElement(suite, "testcase", {
            "classname": xml_text(cid if cid is not None else "(not scored)", MESSAGE_CHARS),
            "name": xml_text(where, MESSAGE_CHARS) or "(not scored)", "time": "0"})
        ET.SubElement(tc, "skipped", {"message": xml_text(problem, MESSAGE_CHARS)})
    ET.SubElement(suite, "system-out").text = "\n".join(gate_notes)
    ET.SubElement(suite, "system-err").text = ""
    ET.indent(suite)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            + ET.tostring(suite, encoding="unicode") + "\n")


def write_junit(sc: Scorecard, path: str | Path, **kw: Any) -> None:
    """Write ``to_junit(sc, **kw)`` to ``path`` (UTF-8).

    Args:
        sc: the scorecard.
        path: the file to write.
        **kw: ``to_junit``'s keyword arguments.

    Raises:
        TrajcheckError: as ``to_junit``.
    """
    Path(path).write_text(to_junit(sc, **kw), encoding="utf-8")


__all__ = ["REASON_CHARS", "headline", "to_junit", "unscored", "write_junit", "xml_text"]
