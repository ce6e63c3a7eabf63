"""Argument provenance: whether the ID-like values an agent passed to its tools came from
somewhere it could have read them (the request, the case's ``user`` context or an earlier tool
result) rather than being invented (DESIGN.md, "Provenance")."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..model import Case, Trajectory
from .calls import _check_case, _text, require_trajectory
from .result import MetricResult


def default_is_id_arg(name: str) -> bool:
    """Default ID-like test: ``id``/``ids``, or ending in ``_id``/``_ids``/``Id``/``Ids``/``ID``.

    ``userId``, ``order_id``, ``booking_ids``, ``ID`` are ID-like; ``valid``, ``paid``,
    ``idea`` are not.
    """
    if name.lower() in ("id", "ids"):
        return True
    if re.search(r"_ids?$", name, re.IGNORECASE):
        return True
    return re.search(r"[a-z0-9](Id|Ids|ID|IDs)$", name) is not None


def _id_values(v: Any) -> list[str]:
    if isinstance(v, bool) or v is None:
        return []
    if isinstance(v, int):
        return [str(v)]
    if isinstance(v, float):
        return [str(int(v))] if v.is_integer() else [repr(v)]
    if isinstance(v, str):
        return [v.strip()] if v.strip() else []
    if isinstance(v, (list, tuple)):
        out: list[str] = []
        for x in v:
            out.extend(_id_values(x))
        return out
    return []


def _grounded(value: str, texts: Sequence[str]) -> bool:
    pat = re.compile(r"(?<![0-9A-Za-z_])" + re.escape(value) + r"(?![0-9A-Za-z_])", re.IGNORECASE)
    return any(pat.search(t) for t in texts)


def argument_provenance(traj: Trajectory, case: Case,
                        id_args: Sequence[str] | Callable[[str], bool] | None = None) -> MetricResult:
    """Fraction of ID-like argument values that are grounded (DESIGN.md, "Provenance").

    Args:
        traj: the run.
        case: the dataset row (its input and ``user`` context are sources).
        id_args: the ID-like argument names: a list, a predicate on the name, or None for
            :func:`default_is_id_arg`.

    Returns:
        ``MetricResult``: ``score`` = grounded / checked, None when no ID-like argument was
        used; ``parts["ungrounded"]`` lists ``{"call_index", "name", "arg", "value"}``.

    Raises:
        MetricInputError: ``traj`` is not a Trajectory or ``case`` not a Case.

    Examples:
        Order 7 was in the request, order 9 came from nowhere:

        >>> from trajcheck.model import Case, Trajectory
        >>> case = Case(id="c1", input="refund order 7")
        >>> run = Trajectory.from_dict({"steps": [{"index": 0, "kind": "tool_call", "tool_calls": [
        ...     {"name": "refund", "args": {"order_id": 7}},
        ...     {"name": "refund", "args": {"order_id": 9}}]}]})
        >>> argument_provenance(run, case).score
        0.5

    A value is grounded when it occurs, case-insensitively at token boundaries, in the case
    input, the case's ``user`` context, a user message before the call, or the output of a
    tool result that came before the call. An integer ID matches its digits; a list value is
    checked item by item. Top-level arguments only; calls whose arguments did not parse are
    skipped.
    """
    case = _check_case(case)
    traj = require_trajectory(traj, what="argument_provenance",
                              needs="the user messages and tool results before each call")
    if id_args is None:
        is_id: Callable[[str], bool] = default_is_id_arg
    elif callable(id_args):
        is_id = id_args
    else:
        names = set(id_args)
        is_id = names.__contains__
    base = [_text(case.input), _text(case.user)]
    seen: list[str] = []
    checked = 0
    grounded_n = 0
    ungrounded: list[dict[str, Any]] = []
    idx = 0
    for s in traj.steps:
        if s.kind == "user" and s.content:
            seen.append(_text(s.content))
        if s.tool_result is not None:
            seen.append(_text(s.tool_result.output))
            if s.tool_result.error:
                seen.append(s.tool_result.error)
        for c in s.tool_calls:
            if isinstance(c.args, Mapping):
                for k, v in c.args.items():
                    if not is_id(k):
                        continue
                    for val in _id_values(v):
                        checked += 1
                        if _grounded(val, base + seen):
                            grounded_n += 1
                        else:
                            ungrounded.append({"call_index": idx, "name": c.name, "arg": k,
                                               "value": val})
            idx += 1
    if checked == 0:
        return MetricResult(name="argument_provenance", score=None,
                            reason="not applicable: no ID-like arguments were used",
                            parts={"checked": 0, "grounded": 0, "ungrounded": []})
    score = grounded_n / checked
    reason = f"{grounded_n}/{checked} ID-like argument values grounded"
    if ungrounded:
        u = ungrounded[0]
        reason += f"; ungrounded: {u['name']}.{u['arg']}={u['value']!r} (call {u['call_index']})"
    return MetricResult(name="argument_provenance", score=score, reason=reason,
                        parts={"checked": checked, "grounded": grounded_n, "ungrounded": ungrounded},
                        passed=not ungrounded)


__all__ = ["argument_provenance", "default_is_id_arg"]
