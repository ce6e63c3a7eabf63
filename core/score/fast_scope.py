"""Which cases and runs the fast scorer takes: one whitelist, read by every fast route.

The fast scorer (``fast_scoring``, the fused route's ``fused_scoring`` and the direct row
load ``row_plan``) computes a run's compact result from facts it gathers itself, with the
formulas of ``metrics``. It may only do so for inputs whose every field it understands; this
module says which, as whitelists:

- ``CASE_FIELDS_FAST``: the ``Case`` fields the fast scorer reads, or knows to have no
  effect on a compact result under the run whitelist below (``expected_final_state`` is
  read only against database snapshots, which ``RUN_META_FAST`` leaves out). Every other
  ``Case`` field is in ``CASE_FIELDS_GENERAL``: a case where one of them is set (not its
  default) is scored by the general path. A new ``Case`` field is in neither set until
  someone puts it in one (tests/test_fast_scope.py fails until then), and meanwhile
  ``case_in_scope`` sends any case that sets it to the general path.
- ``CASE_META_FAST``: the keys of ``Case.metadata`` the fast scorer reads (``category``);
  a case with any other metadata key is scored by the general path.
- ``ROW_KEYS_DIRECT``: the dataset-row keys ``row_plan.direct`` reads straight from a row:
  the case whitelist less the fields whose stored form needs the general load
  (``initial_state`` is resolved against files, ``expected_final_state`` and ``tools`` are
  validated by it).
- ``RUN_META_FAST``: the run metadata keys the fast scorer reads or knows to have no
  effect on the scores; a run with any other key is scored by the general path.
  ``RUN_META_GENERAL`` lists the keys trajcheck reads elsewhere, so that the test can tell
  a key nobody classified from one that was decided.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, fields
from typing import Any

from ..model import Case

#: Case fields the fast scorer understands (module doc)
CASE_FIELDS_FAST = frozenset({
    "id", "input", "user", "initial_state", "expected_calls", "optional_calls",
    "forbidden_calls", "expected_final_state", "max_steps", "optimal_steps", "tools",
    "args_mode", "threshold", "metadata"})
#: Case fields it does not: sequence rules, precedence, faults, required response, route,
#: read-only tools and false-success claim patterns
CASE_FIELDS_GENERAL = frozenset({
    "precedence", "forbidden_sequences", "faults", "response_must_include", "expected_route",
    "read_only_calls", "claim_patterns", "negation_patterns"})
#: Case.metadata keys it understands
CASE_META_FAST = frozenset({"category"})
#: Case.metadata keys trajcheck reads that send a case to the general path
CASE_META_GENERAL = frozenset({"scoring_weights", "expected_behavior", "success_criteria",
                               "expected_last_observation", "outcome_max_steps",
                               "expected_state_is_replay", "preconditions"})
#: dataset-row keys ``row_plan.direct`` reads (a subset of the case whitelist)
ROW_KEYS_DIRECT = CASE_FIELDS_FAST - {"initial_state", "expected_final_state", "tools"}
#: run metadata keys the fast scorer reads or knows to change no score
RUN_META_FAST = frozenset({"case_id", "trial", "run_id", "reward", "recorded_task_id",
                           "problems"})
#: run metadata keys trajcheck reads that send a run to the general path (route, unfinished
#: runs, database snapshots, injected faults, a source's own verdicts) or that only other
#: commands read (the runner's, the judges', the OTel events', the readers' grouping)
RUN_META_GENERAL = frozenset({
    "route", "terminated", "termination", "state_before", "state_after",
    "initial_state_snapshot", "final_state_snapshot", "faults", "recorded_checks",
    "response_id", "agent", "error", "grouped_by", "no_effect_calls", "run_root"})

# the fields outside the whitelist with their defaults (None or an empty tuple): computed
# once at import, never changed
_OTHER_FIELDS: tuple[tuple[str, Any], ...] = tuple(
    (f.name, f.default) for f in fields(Case) if f.name not in CASE_FIELDS_FAST)
assert all(d is None or d == () for _, d in _OTHER_FIELDS if d is not MISSING), _OTHER_FIELDS


def case_in_scope(case: Case) -> bool:
    """Whether the fast scorer may score runs of ``case`` (module doc): a plain ``Case``
    whose fields outside ``CASE_FIELDS_FAST`` are all at their defaults and whose metadata
    keys are inside ``CASE_META_FAST``. The expected calls' own shape (exact, object
    arguments) is ``case_plan``'s to check. Never raises."""
    if type(case) is not Case:
        return False
    for name, default in _OTHER_FIELDS:
        v = getattr(case, name)
        if (v is not None) if default is None else bool(v):
            return False
    meta = case.metadata
    return not meta or meta.keys() <= CASE_META_FAST


def case_meta_in_scope(meta: Any) -> bool:
    """Whether a case's (or a dataset row's) ``metadata`` is inside ``CASE_META_FAST``
    (empty or None included); a value that is not a dict is not. Never raises."""
    return not meta or (type(meta) is dict and meta.keys() <= CASE_META_FAST)


def row_in_scope(row: Mapping[str, Any]) -> bool:
    """Whether a dataset row's keys are inside ``ROW_KEYS_DIRECT`` and its metadata inside
    ``CASE_META_FAST`` (``row_plan.direct`` then reads the rest). Never raises."""
    return row.keys() <= ROW_KEYS_DIRECT and case_meta_in_scope(row.get("metadata"))


def run_in_scope(meta: Mapping[str, Any]) -> bool:
    """Whether a run with metadata ``meta`` is inside ``RUN_META_FAST``. Never raises."""
    return meta.keys() <= RUN_META_FAST


__all__ = ["CASE_FIELDS_FAST", "CASE_FIELDS_GENERAL", "CASE_META_FAST", "CASE_META_GENERAL",
           "ROW_KEYS_DIRECT", "RUN_META_FAST", "RUN_META_GENERAL", "case_in_scope",
           "case_meta_in_scope", "row_in_scope", "run_in_scope"]
