"""Per-run call detail for reports: the expected calls beside the calls the agent made.

``call_detail`` builds, from ``metrics.steps.step_eval`` (the same table the call-rate and
composite metrics count from, so a report and the scores always agree):

- ``expected``: every expected call with its arguments, whether it was made, by which call
  (``pred_index``, an index into ``traj.tool_calls()``), and, when it was not satisfied, the
  deciding difference (``diff``: the first differing place by ``explain.explain_mismatch``)
  and the top-level argument it is in (``diff_arg``) so a report can highlight it;
- ``called``: every call the agent made, in order, with its step, arguments, verdict
  (``matched``, ``wrong_args``, ``optional``, ``retried``, ``unnecessary``, ``forbidden``,
  ``duplicate``, ``parse_error``), all flags, the paired expected call (``exp_index``) and
  whether its result failed (``failed``: True/False, None where the source has no error
  channel);
- ``claims_success``: whether the final response claims an action happened
  (``metrics.sequences.claims_success``); a report shows a claim next to a failed task as a
  false claim.

Argument values are kept as JSON-ready data; a value whose JSON text is longer than
``ARG_CHARS`` characters is cut (the cut is marked).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..match.explain import explain_mismatch
from ..match.matching import is_failed
from ..metrics.sequences import claims_success
from ..metrics.steps import effective_expected, step_eval
from ..model import Case, Trajectory

ARG_CHARS = 600
_INT_SHORT = 10**18  # JSON text of at most 20 characters
# json.dumps(v, ensure_ascii=False, default=str) without building an encoder per call
_dumps = json.JSONEncoder(ensure_ascii=False, default=str).encode


def _cut_value(v: Any) -> Any:
    t = type(v)
    if ((t is str and 6 * len(v) + 2 <= ARG_CHARS) or t is bool or v is None
            or (t is int and -_INT_SHORT < v < _INT_SHORT) or (t is float and v - v == 0.0)):
        return v  # JSON text within ARG_CHARS (a character is at most 6): read back as v
    text = _dumps(v)
    if len(text) <= ARG_CHARS:
        return json.loads(text)
    return text[:ARG_CHARS] + f" ...[{len(text) - ARG_CHARS} more characters]"


def _args(a: Any, raw: Any = None) -> Any:
    if type(a) is dict or isinstance(a, Mapping):  # a dict without the ABC check
        return {str(k): _cut_value(v) for k, v in a.items()}
    if a is None:
        return None if raw is None else _cut_value(raw)
    return _cut_value(a)


_ARG_RE = re.compile(r"^([^\s:\[.]+)")


def diff_arg(diff: str | None, args: Any) -> str | None:
    """The top-level argument name a ``explain_mismatch`` phrase starts with
    (``"flights[0]: unexpected keys ..."`` -> ``"flights"``) when it is one of ``args``' keys
    (a dict), else None."""
    if not diff or not (type(args) is dict or isinstance(args, Mapping)):
        return None
    m = _ARG_RE.match(diff)
    if m and m.group(1) in args:
        return m.group(1)
    return None


def call_detail(traj: Trajectory, case: Case, *, context: Any = None) -> dict[str, Any]:
    """The expected-vs-called table of one run (see the module docstring for the keys).

    ``context``: a ``matchers.MatchContext`` (semantic/judge matchers), as for the metrics.
    Raises what ``step_eval`` raises on a malformed case (``TrajcheckError`` subclasses).
    """
    ev = step_eval(traj, case, context=context)
    pairs = traj.pairs()
    calls = [c for c, _ in pairs]
    exp_calls = effective_expected(case)
    called: list[dict[str, Any]] = []
    for row in ev.predicted:
        c, res = pairs[row.index]
        failed: bool | None = True if is_failed(res) else (None if res is None or res.is_error is None
                                                             else False)
        called.append({"index": row.index, "step": row.step, "name": row.name,
                       "args": _args(c.args, c.raw_args), "verdict": row.verdict,
                       "flags": list(row.flags), "exp_index": row.exp_index,
                       "reason": row.reason, "failed": failed})
    # a call flagged wrong_args points at the expected call it had the right tool for
    wrong_for = {r.exp_index: r.index for r in ev.predicted if r.verdict == "wrong_args"
                 and r.exp_index is not None}
    expected: list[dict[str, Any]] = []
    for erow in ev.expected:
        e = exp_calls[erow.index]
        diff: str | None = None
        near: int | None = erow.pred_index if erow.args_ok is False else wrong_for.get(erow.index)
        if near is None and not erow.args_ok:
            same = [i for i, c in enumerate(calls) if c.name == e.name]
            near = same[0] if same else None
        if near is not None and not erow.args_ok:
            try:
                diff = explain_mismatch(calls[near], e, context=context)
            except Exception as ex:  # noqa: BLE001 -- only an explanation; the score stands
                diff = f"could not explain the difference ({type(ex).__name__})"
        if diff is None and not erow.made:
            diff = f"{e.name} was never called"
        expected.append({"index": erow.index, "name": erow.name, "args": _args(e.args),
                         "made": erow.made, "args_ok": erow.args_ok, "pred_index": erow.pred_index,
                         "closest": near, "reason": erow.reason, "diff": diff,
                         "diff_arg": diff_arg(diff, e.args) or (
                             diff_arg(diff, calls[near].args) if near is not None else None)})
    return {"expected": expected, "called": called,
            "claims_success": bool(claims_success(traj.final_response))}


__all__ = ["ARG_CHARS", "call_detail", "diff_arg"]
