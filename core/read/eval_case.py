"""Seed 001's suite shape (``TrajectoryEvalCase``) read into trajcheck's one internal form, ``Case``.

A seed 001 case is ``{id, input, expected_outcome, expected_trajectory, scoring_weights}``
(a dict, or any object with those attributes, e.g. the seed's own dataclass). Each field
lands where trajcheck keeps the same meaning:

========================================  ==================================================
``expected_outcome.must_contain``         ``response_must_include``
``expected_trajectory.required_tools``    ``expected_calls`` (one per tool, arguments from
                                          ``required_args``; extra arguments allowed)
``expected_trajectory.required_args``     those calls' ``args``; a callable value (the seed's
                                          ``lambda d: ...`` validators) becomes that
                                          argument's matcher, called on the predicted value
``expected_trajectory.tool_order``        ``precedence`` pairs of consecutive tools
``expected_trajectory.forbidden_tools``   ``forbidden_calls``
``expected_trajectory.max_steps``         ``max_steps`` (the efficiency budget)
``scoring_weights``                       ``metadata["scoring_weights"]`` (``arg_correctness``
                                          read as ``argument_correctness``), which
                                          ``metrics.composite.score_trajectory`` uses
========================================  ==================================================

``expected_outcome.max_steps`` and ``expected_outcome.final_state`` (seed 001 compares the
last tool observation's keys) have no neutral Case field: they are kept in ``metadata``
(``outcome_max_steps``, ``expected_last_observation``) and scored as part of the run's
outcome by ``metrics.outcome_checks`` (a database final state is trajcheck's
``expected_final_state``, checked on snapshots). An unknown key in any of the three objects
raises ``DatasetError`` naming the case and the key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import DatasetError
from ..model import Case, ExpectedCall

OUTCOME_KEYS = ("must_contain", "max_steps", "final_state")
TRAJECTORY_KEYS = ("required_tools", "tool_order", "forbidden_tools", "required_args", "max_steps")
WEIGHT_NAMES = {"outcome": "outcome", "tool_selection": "tool_selection",
                "arg_correctness": "argument_correctness", "efficiency": "efficiency"}


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)


def _section(obj: Any, key: str, known: Sequence[str], cid: Any) -> Mapping[str, Any]:
    v = _get(obj, key) or {}
    if not isinstance(v, Mapping):
        raise DatasetError(f"case {cid!r}: {key} must be an object, got {type(v).__name__}")
    bad = sorted(str(k) for k in v if k not in known)
    if bad:
        raise DatasetError(f"case {cid!r}: {key}: unknown key {bad[0]!r} (known: {', '.join(known)})")
    return v


def _validator(fn: Callable[[Any], Any]) -> Callable[[Any, Any], bool]:
    def check(_expected: Any, predicted: Any) -> bool:
        try:
            return bool(fn(predicted))
        except Exception:  # noqa: BLE001 -- a validator that raises rejects the value
            return False
    return check


def case_from_eval_case(obj: Any) -> Case:
    """A ``Case`` from one seed 001 ``TrajectoryEvalCase`` (dict or object); see the module
    doc for the field map. Raises ``DatasetError`` naming the case for a missing ``id`` or
    ``input``, an unknown key, or a malformed value."""
    cid, text = _get(obj, "id"), _get(obj, "input")
    if cid is None or text is None:
        raise DatasetError(f"seed 001 case {cid!r}: needs 'id' and 'input'")
    out = _section(obj, "expected_outcome", OUTCOME_KEYS, cid)
    traj = _section(obj, "expected_trajectory", TRAJECTORY_KEYS, cid)
    for key in ("required_tools", "tool_order", "forbidden_tools"):
        names = traj.get(key)
        # a list of names given one string would otherwise become one-letter tool names
        if names is not None and (not isinstance(names, (list, tuple))
                                  or not all(isinstance(n, str) and n for n in names)):
            raise DatasetError(f"case {cid!r}: expected_trajectory.{key} must be a list of tool names, "
                               f"got {type(names).__name__} {names!r}")
    req_args = traj.get("required_args") or {}
    if not isinstance(req_args, Mapping):
        raise DatasetError(f"case {cid!r}: expected_trajectory.required_args must map tool names to arguments")
    expected: list[ExpectedCall] = []
    for tool in list(traj.get("required_tools") or ()) + [t for t in req_args
                                                           if t not in (traj.get("required_tools") or ())]:
        spec = req_args.get(tool)
        if spec is None:
            expected.append(ExpectedCall(tool, None, args_mode="expected_keys"))
            continue
        if not isinstance(spec, Mapping):
            raise DatasetError(f"case {cid!r}: required_args[{tool!r}] must be an object")
        args = {k: (None if callable(v) else v) for k, v in spec.items()}
        match = {k: _validator(v) for k, v in spec.items() if callable(v)}
        expected.append(ExpectedCall(tool, args, match=match, args_mode="expected_keys"))
    order = list(traj.get("tool_order") or ())
    weights = _get(obj, "scoring_weights")
    meta: dict[str, Any] = {"source": "seed 001 TrajectoryEvalCase"}
    if weights is not None:
        if not isinstance(weights, Mapping) or any(k not in WEIGHT_NAMES for k in weights):
            raise DatasetError(f"case {cid!r}: scoring_weights keys must be among {', '.join(WEIGHT_NAMES)}")
        meta["scoring_weights"] = {WEIGHT_NAMES[k]: v for k, v in weights.items()}
    ms, fs = out.get("max_steps"), out.get("final_state")
    if ms is not None:
        if isinstance(ms, bool) or not isinstance(ms, int) or ms < 0:
            raise DatasetError(f"case {cid!r}: expected_outcome.max_steps must be an int >= 0, got {ms!r}")
        meta["outcome_max_steps"] = ms
    if fs is not None:
        if not isinstance(fs, Mapping) or not all(isinstance(k, str) for k in fs):
            raise DatasetError(f"case {cid!r}: expected_outcome.final_state must be an object "
                               f"with string keys, got {fs!r}")
        meta["expected_last_observation"] = dict(fs)
    return Case(
        id=str(cid), input=text,
        expected_calls=tuple(expected),
        forbidden_calls=traj.get("forbidden_tools") or (),
        precedence=tuple((a, b) for a, b in zip(order, order[1:])),
        response_must_include=out.get("must_contain") or (),
        max_steps=traj.get("max_steps"),
        metadata=meta,
    )


def cases_from_eval_suite(suite: Sequence[Any]) -> list[Case]:
    """``case_from_eval_case`` for each item of a seed 001 suite (a list of cases)."""
    return [case_from_eval_case(c) for c in suite]


__all__ = ["case_from_eval_case", "cases_from_eval_suite"]
