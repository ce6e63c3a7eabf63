"""Reading stage: recorded runs tied to their cases, with the problems found on the way.

The first stage of a suite evaluation (reading -> per-run scoring -> mergeable aggregation
-> reporting). Readers (``trajcheck.read.traces``) turn files into ``Trajectory`` objects; this
module keys each one to its ``Case`` by ``metadata["case_id"]`` and lists what could not be
keyed. ``RunKeyer`` works one trajectory at a time, so a streaming evaluation keeps only
the cases and a few counters, never the runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from ..errors import MetricInputError
from ..model import Case, Trajectory
from .case_store import CaseStore

PROBLEMS_SHOWN = 10


def problem_lines(problems: Sequence[str], limit: int = PROBLEMS_SHOWN) -> list[str]:
    """``problems`` as list items (``"  - ..."``), the first ``limit`` of them, then
    ``"  ... and N more"`` when some are left out."""
    out = [f"  - {p}" for p in problems[:limit]]
    if len(problems) > limit:
        out.append(f"  ... and {len(problems) - limit} more")
    return out


def _unmatched_message(n_traces: int, no_cid: Sequence[int], unknown: Sequence[str],
                       case_map: Mapping[str, Case], problems: Sequence[str]) -> str:
    """The error when no trace matched a case: the cause first, then the problems as a list."""
    def runs(n: int) -> str:
        return f"{n} run{'' if n == 1 else 's'}"

    causes: list[str] = []
    if n_traces == 0:
        causes.append("no traces were read")
    if not case_map:
        causes.append("no cases were given and these traces carry none: pass the cases "
                      "(--cases); only tau-bench result files carry their own")
    if no_cid:
        causes.append(f"{runs(len(no_cid))} {'has' if len(no_cid) == 1 else 'have'} no case_id in "
                      "their metadata: traces must carry metadata.case_id (trajcheck run writes "
                      "it; tau-bench files carry their own cases)")
    if unknown and case_map:
        ids = list(dict.fromkeys(unknown))
        known = list(case_map)
        causes.append(f"{runs(len(unknown))} {'names' if len(unknown) == 1 else 'name'} a case id that is not among the {len(known)} "
                      f"case(s) (e.g. {ids[0]!r}; the cases' ids are "
                      f"{', '.join(repr(c) for c in known[:5])}{', ...' if len(known) > 5 else ''})")
    lines = ["no trace could be matched to a case: " + (causes[0] if causes else "see the problems")]
    lines += [f"also: {c}" for c in causes[1:]]
    if problems:
        lines.append(f"{len(problems)} problem(s):")
        lines += problem_lines(problems)
    return "\n".join(lines)



def case_map_of(cases: Mapping[str, Case] | Sequence[Case] | None) -> dict[str, Case]:
    """Cases by id, from a mapping id -> ``Case``, a sequence of cases, or None (empty)."""
    if cases is None:
        return {}
    return dict(cases) if isinstance(cases, Mapping) else {c.id: c for c in cases}


class RunKeyer:
    """Keys trajectories to cases one at a time, recording problems (trajcheck policy):

    - a trajectory with no ``metadata["case_id"]``: problem, not scored;
    - a trajectory whose case id is not among the cases: problem, not scored;
    - a case with no trajectory: problem (``finish``).

    ``problems`` starts with the reader's problems (``initial``). ``finish`` raises
    ``MetricInputError`` when no trajectory could be keyed; its message leads with the
    cause (runs without ``metadata.case_id``, no cases at all, or case ids not among the
    cases), then lists the problems (the first ``PROBLEMS_SHOWN``, then "... and N more").
    """

    def __init__(self, case_map: Mapping[str, Case], initial: Iterable[str] = ()) -> None:
        self.case_map = case_map
        self.problems: list[str] = list(initial)
        self.seen: set[str] = set()
        self.no_cid: list[int] = []
        self.unknown: list[str] = []
        self.n_traces = 0
        self.n_keyed = 0
        # cases held under their own ids (a case store, or a dict built by case_map_of)
        self._by_id = isinstance(case_map, CaseStore)
        self._has = case_map.keys().__contains__  # a store's or dict's: no Python-level call

    def key(self, i: int, t: Trajectory) -> Case | None:
        """The case of trajectory number ``i`` (its position in the input), or None (a
        problem was recorded)."""
        cid = self.key_id(i, t)
        return None if cid is None else self.case_map[cid]

    def key_id(self, i: int, t: Trajectory) -> str | None:
        """``key`` without building the case: the id under which ``case_map`` holds the
        case of trajectory number ``i``, or None (a problem was recorded). With a
        ``case_plan.plan_for`` of that id a scorer needs no ``Case`` for most runs."""
        self.n_traces += 1
        meta = t.metadata
        cid = meta.get("case_id")
        if cid is None:
            self.no_cid.append(i)
            self.problems.append(f"trace {i} (run {meta.get('run_id') or f'#{i}'}): no case_id "
                                 "in its metadata; not scored")
            return None
        sid = cid if type(cid) is str else str(cid)
        if not self._has(sid):
            self.unknown.append(sid)
            self.problems.append(f"trace {i} (run {meta.get('run_id') or f'#{i}'}): case id "
                                 f"{cid!r} is not among the cases; not scored")
            return None
        if self._by_id:
            self.seen.add(sid)
        else:  # a mapping may hold a case under another key than its id: the case's own id
            self.seen.add(self.case_map[sid].id)
        self.n_keyed += 1
        return sid

    def finish(self) -> list[str]:
        """Add the cases that got no trajectory to the problems and return them all; raises
        ``MetricInputError`` (cause first) when no trajectory was keyed."""
        for cid in self.case_map:
            if cid not in self.seen:
                self.problems.append(f"case {cid!r}: no traces; not scored")
        if not self.n_keyed:
            raise MetricInputError(_unmatched_message(self.n_traces, self.no_cid, self.unknown,
                                                      self.case_map, self.problems))
        return self.problems


def pair_runs(trajs: Iterable[Trajectory], case_map: Mapping[str, Case],
              problems: Iterable[str] = ()) -> tuple[list[tuple[Trajectory, Case]], list[str]]:
    """All ``(trajectory, case)`` pairs that could be keyed, and the problems (``RunKeyer``).
    Raises ``MetricInputError`` when none could be keyed."""
    keyer = RunKeyer(case_map, problems)
    runs = [(t, c) for i, t in enumerate(trajs) if (c := keyer.key(i, t)) is not None]
    return runs, keyer.finish()


def keyed(trajs: Iterable[Trajectory], keyer: RunKeyer) -> Iterator[tuple[int, Trajectory, Case]]:
    """Stream ``(position, trajectory, case)`` for every trajectory ``keyer`` can key (call
    ``keyer.finish()`` after exhausting it)."""
    for i, t in enumerate(trajs):
        c = keyer.key(i, t)
        if c is not None:
            yield i, t, c


__all__ = ["PROBLEMS_SHOWN", "RunKeyer", "case_map_of", "keyed", "pair_runs", "problem_lines"]
