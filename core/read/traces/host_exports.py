"""Host exports that carry their own references: runs and their cases from one file.

A DeepEval test-run file, a RAGAS dataset export and an Inspect AI log hold, next to each
run, what the run is scored against. ``trajcheck eval FILE`` with no ``--cases`` scores them:
this module turns each host record into the ``(Trajectory, Case)`` pair that trajcheck's
adapter inside that host builds from the same record, through the adapter's own converters
(``trajcheck.adapters._convert``, which import no host), so the figures are the adapter's
(tests/test_host_exports.py compares them with the scores the real hosts recorded).

* DeepEval test run (``.deepeval/.latest_run_full.json`` / ``.latest_test_run.json``,
  ``{"testCases": [...], "conversationalTestCases": [...], ...}``, camelCase as DeepEval
  writes it): a test case is a run (``toolsCalled``; ``metadata["trajcheck"]`` (or the
  metadata itself) holds ``failed_calls``, ``parallel_calls`` and the case settings, as the
  ``TrajcheckMetric`` reads them) and its case (``expectedTools``: a call with no
  ``inputParameters`` constrains the name only). case id: the test case's ``name``, else
  ``test case <order>``. A conversational test case is a run of its turns; its expected calls
  come from ``metadata["trajcheck"]["expected_calls"]`` only (DeepEval has no field for them).
* RAGAS dataset export (``EvaluationDataset.to_jsonl`` / ``to_list``: rows ``{"user_input":
  [messages], "reference_tool_calls": [...]}``): a row is a run (a ``ToolMessage`` with
  ``metadata.is_error`` true is a failed result) and its case (``reference_tool_calls``, the
  first user message's ``metadata["trajcheck"]`` settings). RAGAS rows have no id: the case
  id is ``sample <i>``, the row's 0-based position in its file (RAGAS's own result index).
* Inspect AI log: each sample's ``metadata["trajcheck"]`` (what ``sample_metadata`` writes,
  what ``trajcheck_scorer`` reads) is the case of the sample id; every epoch of the sample is
  a run of it. The sample's ``target`` is not read: the trajcheck scorers do not read it.

What the file cannot hold is not guessed: settings given to a host metric's constructor
(``TrajcheckMetric(forbidden_calls=...)``) are not in any export; score such settings with
``--cases``. A record whose reference cannot be read (an unknown key in its settings, a
malformed expected call) is skipped with the host's own error text, the rest are read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...errors import TrajcheckError
from ...model import Case, Trajectory
from ._util import as_plain, is_seq

DEEPEVAL = "DeepEval test run"
RAGAS = "RAGAS dataset export"

#: DeepEval's camelCase keys (as its test-run file writes them) -> the attribute names of its
#: objects, which the adapter's converters read
_DE_KEYS = {"toolsCalled": "tools_called", "expectedTools": "expected_tools",
            "inputParameters": "input_parameters", "actualOutput": "actual_output",
            "expectedOutput": "expected_output"}


@dataclass
class ExportRead:
    """What one file's host-export records gave: ``runs`` (trajectory, location), ``cases``
    by id, ``skipped`` (records not read, with why) and the ``wrapper`` named in ``inspect``."""

    wrapper: str
    runs: list[tuple[Trajectory, str]] = field(default_factory=list)
    cases: dict[str, Case] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def kind(obj: Any) -> str | None:
    """``DEEPEVAL`` or ``RAGAS`` when ``obj`` is such an export record carrying references,
    else None (never raises)."""
    try:
        d = as_plain(obj)
        if not isinstance(d, Mapping):
            return None
        if (is_seq(d.get("testCases")) or is_seq(d.get("conversationalTestCases"))) and (
                "testPassed" in d or "metricsScores" in d or "testCases" in d):
            return DEEPEVAL
        if is_seq(d.get("user_input")) and d.get("reference_tool_calls") is not None:
            return RAGAS
    except Exception:
        return None
    return None


def _snake(d: Any) -> Any:
    """A DeepEval test case / tool call / turn dict with its camelCase keys renamed (the
    ``metadata`` value is the user's and is left as it is)."""
    if not isinstance(d, Mapping):
        return d
    out: dict[str, Any] = {}
    for k, v in d.items():
        k2 = str(_DE_KEYS.get(str(k), k))
        if k2 in ("tools_called", "expected_tools", "turns") and is_seq(v):
            v = [_snake(x) for x in v]
        out[k2] = v
    return out


def _with_states(t: Trajectory, settings: Mapping[str, Any]) -> Trajectory:
    """The run carrying the settings' database snapshots (``before_state``/``after_state``)
    where eval's final-state check reads them (``state_before``/``state_after``)."""
    b, a = settings.get("before_state"), settings.get("after_state")
    if not (isinstance(b, Mapping) and isinstance(a, Mapping)):
        return t
    meta = dict(t.metadata)
    meta.setdefault("state_before", b)
    meta.setdefault("state_after", a)
    return replace(t, metadata=meta)


def _keyed(t: Trajectory, cid: str, trial: int | None = None) -> Trajectory:
    meta = dict(t.metadata)
    meta["case_id"] = cid
    if trial is not None:
        meta.setdefault("trial", trial)
    return replace(t, metadata=meta)


def _put_case(out: ExportRead, cid: str, case: Case, where: str) -> str:
    """Keep ``case`` under ``cid``; a second, different case of that id is kept under
    ``<cid>#<n>`` with a problem. Returns the id used."""
    have = out.cases.get(cid)
    if have is None or have == case:
        out.cases[cid] = case
        return cid
    n = 2
    while f"{cid}#{n}" in out.cases and out.cases[f"{cid}#{n}"] != case:
        n += 1
    new = f"{cid}#{n}"
    out.cases[new] = replace(case, id=new)
    out.problems.append(f"{where}: its reference differs from an earlier record's of the same "
                        f"name {cid!r}; scored as case {new!r}")
    return new


def _deepeval_case(tc: Mapping[str, Any], cid: str, conversational: bool) -> tuple[Trajectory, Case]:
    from trajcheck.adapters import _case, _convert

    meta = tc.get("metadata")
    settings = _case.metadata_settings(meta, "metadata")
    if conversational:
        traj = _convert.deepeval_conversation_trajectory(tc)
        first_user = next((t.get("content") for t in tc.get("turns") or () if isinstance(t, Mapping)
                           and t.get("role") == "user"), "")
        case = _case.build_case(cid, first_user, (), settings)
    else:
        traj = _convert.deepeval_trajectory(tc)
        case = _case.build_case(cid, tc.get("input"), _convert.deepeval_expected(tc.get("expected_tools")),
                                   settings)
    if settings.get("match"):
        case = replace(case, expected_calls=_case.apply_match(case.expected_calls, settings["match"]))
    return _with_states(traj, settings), case


def read_deepeval(items: Iterable[tuple[Any, str]]) -> ExportRead:
    """The runs and cases of DeepEval test-run documents given with their locations."""
    out = ExportRead(DEEPEVAL)
    order = 0
    for obj, where in items:
        d = as_plain(obj)
        for key, conv in (("testCases", False), ("conversationalTestCases", True)):
            for i, raw in enumerate(d.get(key) or ()):
                w = f"{where} {key}[{i}]"
                tc = _snake(as_plain(raw))
                if not isinstance(tc, Mapping):
                    out.skipped.append(f"{w}: not a DeepEval test case; skipped")
                    continue
                name = tc.get("name")
                cid = str(name) if name not in (None, "") else f"test case {tc.get('order', order)}"
                order += 1
                try:
                    t, case = _deepeval_case(tc, cid, conv)
                except (TrajcheckError, TypeError, ValueError) as e:
                    out.skipped.append(f"{w} ({cid}): {e}; skipped")
                    continue
                cid = _put_case(out, cid, case, w)
                out.runs.append((_keyed(t, cid), w))
    return out


def read_ragas(items: Iterable[tuple[Any, str]]) -> ExportRead:
    """The runs and cases of RAGAS dataset rows (one file's, in order) with their locations."""
    from trajcheck.adapters import _case, _convert

    out = ExportRead(RAGAS)
    for i, (obj, where) in enumerate(items):
        row = as_plain(obj)
        cid = f"sample {i}"
        try:
            msgs = list(row["user_input"])
            traj = _convert.ragas_trajectory(msgs)
            settings = _convert.message_settings(msgs)
            case = _case.build_case(cid, traj.user_input, _convert.ragas_expected(row.get("reference_tool_calls")),
                                       settings)
            if settings.get("match"):
                case = replace(case, expected_calls=_case.apply_match(case.expected_calls, settings["match"]))
        except (TrajcheckError, TypeError, ValueError, KeyError) as e:
            out.skipped.append(f"{where} ({cid}): {e}; skipped")
            continue
        out.cases[cid] = case
        out.runs.append((_keyed(_with_states(traj, settings), cid), where))
    return out


def inspect_cases(references: Mapping[str, Any], runs: Sequence[tuple[Trajectory, str]]
                  ) -> tuple[dict[str, Case], list[tuple[Trajectory, str]], list[str]]:
    """Cases of an Inspect AI log's samples: ``references`` maps a run's location to its
    sample's metadata as logged for that epoch; a sample whose metadata has a ``"trajcheck"``
    block gets the case the ``trajcheck_scorer`` builds from it (input: the run's first user
    message). Returns ``(cases, runs, problems)``, each run carrying its own epoch's database
    snapshots from the block; samples without the block get no case, and a sample whose
    epochs hold different references is scored against its first one, with a problem."""
    from trajcheck.adapters import _case, _convert, _spec

    cases: dict[str, Case] = {}
    problems: list[str] = []
    bad: set[str] = set()
    out_runs: list[tuple[Trajectory, str]] = []
    for t, where in runs:
        sid = str(t.metadata.get("case_id"))
        md = references.get(where)
        if not isinstance(md, Mapping) or "trajcheck" not in md or sid in bad:
            out_runs.append((t, where))
            continue
        try:
            ref = _spec.reference_block(md.get("trajcheck"), f"sample {sid!r} metadata['trajcheck']")
            exp_raw = ref.get("expected_calls")
            exp = (_convert.expected_from_reference(exp_raw, where=f"case {sid!r}: expected_calls")
                   if exp_raw is not None else ())
            rest = {k: v for k, v in ref.items() if k != "expected_calls"}
            case = _case.build_case(sid, t.user_input, exp, rest)
            if ref.get("match"):
                case = replace(case, expected_calls=_case.apply_match(case.expected_calls, ref["match"]))
        except TrajcheckError as e:
            problems.append(f"{where}: its reference cannot be read ({e}); the sample is not scored")
            bad.add(sid)
            cases.pop(sid, None)
            out_runs.append((t, where))
            continue
        have = cases.setdefault(sid, case)
        if have != case:
            problems.append(f"{where}: its reference differs from the sample's first epoch's; "
                            "scored against the first")
        out_runs.append((_with_states(t, ref), where))
    return cases, out_runs, problems


__all__ = ["DEEPEVAL", "RAGAS", "ExportRead", "inspect_cases", "kind", "read_deepeval", "read_ragas"]
