"""Plain-pytest assertions over an agent's tool calls (``from trajcheck.testing import ...``).

Each helper takes a trajectory (a ``Trajectory``, or anything ``read.traces.read`` reads: a
list of ``{"name", "args"}`` calls, OpenAI / Anthropic messages, ...), decides with the same
functions the metrics use (``metrics.trajectory.trajectory_match`` for the mode,
``score.run_detail.call_detail`` for which call was the closest and the deciding argument),
and raises ``AssertionError`` whose message shows the expected calls beside the calls made,
with the argument that decided each mismatch. They return the trajectory read, so a test can
go on with it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ..model import Case, ExpectedCall, Trajectory

SHOWN_CHARS = 120  # one call's arguments in a failure message
# how a call no expected call took is marked (``run_detail.call_detail`` verdicts)
_VERDICTS = {"unnecessary": "unexpected", "optional": "other call (allowed in this mode)",
             "retried": "failed, retried later"}


def as_trajectory(trajectory: Any) -> Trajectory:
    """``trajectory`` as a ``Trajectory``.

    Args:
        trajectory: a ``Trajectory``, or any trace ``read.traces.read`` detects (a list of
            ``{"name", "args"}`` dicts, chat messages with tool calls, ...).

    Returns:
        The trajectory.

    Raises:
        TraceFormatError: ``trajectory`` is not a trace trajcheck reads.
    """
    if isinstance(trajectory, Trajectory):
        return trajectory
    from ..read.traces import read

    return read(trajectory)


def expected_calls(expected: Iterable[Any]) -> tuple[ExpectedCall, ...]:
    """The expected calls from names, ``{"name", "args", "match", "args_mode"}`` dicts or
    ``ExpectedCall``s.

    Args:
        expected: the calls a test expects, in order.

    Returns:
        ``ExpectedCall``s.

    Raises:
        DatasetError: an item that is not a call (names the item and field).
    """
    out = []
    for i, e in enumerate(expected):
        if isinstance(e, ExpectedCall):
            out.append(e)
        elif isinstance(e, str):
            out.append(ExpectedCall(e))
        elif isinstance(e, dict):
            unknown = set(e) - {"name", "args", "match", "args_mode"}
            if unknown:
                import difflib

                k = sorted(unknown)[0]
                close = difflib.get_close_matches(k, ["name", "args", "match", "args_mode"], n=1)
                from ..errors import DatasetError

                raise DatasetError(f"expected[{i}]: unknown field {k!r}"
                                   + (f"; did you mean {close[0]!r}?" if close else ""))
            out.append(ExpectedCall(e.get("name"), e.get("args"),  # type: ignore[arg-type]
                                    dict(e.get("match") or {}),
                                    e.get("args_mode")))
        else:
            from ..errors import DatasetError

            raise DatasetError(f"expected[{i}]: a call is a tool name, a dict with 'name' "
                               f"(and 'args', 'match'), or an ExpectedCall; got {type(e).__name__}")
    return tuple(out)


def _show_call(name: Any, args: Any) -> str:
    if isinstance(args, dict):
        inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str)}"
                          for k, v in args.items())
    elif args is None:
        inner = "..."  # an expected call without arguments: any arguments
    else:
        inner = json.dumps(args, ensure_ascii=False, default=str)
    text = f"{name}({inner})"
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 4] + "...)"


def calls_table(traj: Trajectory, case: Case) -> list[str]:
    """Lines showing each expected call beside the call that matched it, or the closest call
    of that tool with the deciding argument, then the calls no expected call took.

    Args:
        traj: the run.
        case: the expectations (its expected calls, optional and forbidden tools).

    Returns:
        The lines (no trailing newline).
    """
    from ..score.run_detail import call_detail
    from ..textsafe import visible

    d = call_detail(traj, case)
    calls = traj.tool_calls()
    left = [f"#{e['index']} {_show_call(e['name'], e['args'])}" for e in d["expected"]]
    width = min(max([len("expected")] + [len(x) for x in left]), SHOWN_CHARS + 6)
    lines = [f"  {'expected'.ljust(width)} | actual"]
    used: set[int] = set()
    for e, lhs in zip(d["expected"], left):
        j = e["pred_index"] if e["args_ok"] else e["closest"]
        if j is not None:
            used.add(j)
            rhs = f"call {j}: {_show_call(calls[j].name, calls[j].args)}"
        else:
            rhs = "(never called)"
        mark = "ok" if e["args_ok"] else f"<- {e['diff'] or 'not matched'}"
        lines.append(visible(f"  {lhs.ljust(width)} | {rhs}  {mark}"))
    for c in d["called"]:
        if c["index"] in used:
            continue
        verdict = _VERDICTS.get(c["verdict"], c["verdict"])
        lines.append(visible(f"  {''.ljust(width)} | call {c['index']}: "
                             f"{_show_call(c['name'], c['args'])}  <- {verdict}"))
    return lines


def case_for(expected: Sequence[ExpectedCall], *, mode: str, traj: Trajectory,
             forbidden: Sequence[str] = (), case_id: str = "assertion") -> Case:
    """The case an assertion stands for: the expected calls, and, in a mode that allows other
    calls (``superset``, ``in_order``), the other tools the run called as optional calls
    (so they are listed, not counted against it); ``forbidden`` as forbidden calls.

    Args:
        expected: the expected calls.
        mode: the trajectory mode asserted.
        traj: the run (its tool names, for the optional calls).
        forbidden: forbidden tool names.
        case_id: the case's id.

    Returns:
        The case.
    """
    names = {e.name for e in expected}
    optional: tuple[str, ...] = ()
    if mode in ("superset", "in_order"):
        optional = tuple(dict.fromkeys(c.name for c in traj.tool_calls()
                                       if c.name not in names and c.name not in forbidden))
    return Case(id=case_id, input="", expected_calls=tuple(expected), optional_calls=optional,
                forbidden_calls=tuple(forbidden))


def assert_calls(trajectory: Any, expected: Iterable[Any], mode: str = "in_order", *,
                 args_mode: str | None = None, dialect: str | None = None) -> Trajectory:
    """Assert the run's calls match ``expected`` in ``mode``.

    Args:
        trajectory: the run (see ``as_trajectory``).
        expected: tool names, ``{"name", "args", "match"}`` dicts or ``ExpectedCall``s.
        mode: ``exact``, ``in_order`` (default), ``unordered``, ``superset``, ``subset``, or a
            framework's name with ``dialect`` (``metrics.trajectory_modes.MODE_TABLE``).
        args_mode: how arguments compare (``expected_keys`` by default: the expected keys
            must match, others may be present; ``exact_keys``; ``ignore``).
        dialect: the framework whose mode name ``mode`` is.

    Returns:
        The trajectory read.

    Raises:
        AssertionError: the calls do not match; the message shows expected beside actual.
        MetricInputError: an unknown mode or args mode.
    """
    __tracebackhide__ = True  # pytest shows the test's line, not this helper's
    from ..metrics.trajectory import trajectory_match

    traj = as_trajectory(trajectory)
    exp = expected_calls(expected)
    if args_mode is not None:
        exp = tuple(ExpectedCall(e.name, e.args, e.match, args_mode) for e in exp)
    r = trajectory_match(traj, list(exp), mode, dialect=dialect, args_mode=args_mode)
    if not r.passed:
        neutral = r.parts.get("mode", mode)
        case = case_for(exp, mode=neutral, traj=traj)
        raise AssertionError("\n".join([f"tool calls do not match ({neutral}): {r.reason}"]
                                       + calls_table(traj, case)))
    return traj


def assert_no_forbidden(trajectory: Any, forbidden: Iterable[str]) -> Trajectory:
    """Assert the run made no call of a forbidden tool.

    Args:
        trajectory: the run (see ``as_trajectory``).
        forbidden: tool names the run must not call.

    Returns:
        The trajectory read.

    Raises:
        AssertionError: some call was forbidden; the message lists each with its arguments.
    """
    __tracebackhide__ = True  # pytest shows the test's line, not this helper's
    from ..textsafe import visible

    traj = as_trajectory(trajectory)
    names = set(forbidden)
    bad = [(i, c) for i, c in enumerate(traj.tool_calls()) if c.name in names]
    if bad:
        raise AssertionError("\n".join(
            [f"{len(bad)} forbidden call{'s' if len(bad) > 1 else ''} made "
             f"(forbidden: {', '.join(sorted(names))}):"]
            + [visible(f"  call {i}: {_show_call(c.name, c.args)}") for i, c in bad]))
    return traj


def assert_called(trajectory: Any, name: str, args: dict[str, Any] | None = None, *,
                  match: dict[str, Any] | None = None) -> Trajectory:
    """Assert the run called ``name`` (with ``args`` matching, when given) at least once.

    Args:
        trajectory: the run (see ``as_trajectory``).
        name: the tool.
        args: the expected arguments (others may be present), or None for any.
        match: per-argument matchers (``{"title": "normalized"}``).

    Returns:
        The trajectory read.

    Raises:
        AssertionError: no such call; the message shows the closest call and the deciding
            argument.
    """
    __tracebackhide__ = True  # pytest shows the test's line, not this helper's
    return assert_calls(trajectory, [{"name": name, "args": args, "match": match or {}}],
                        "superset")


__all__ = ["as_trajectory", "assert_called", "assert_calls", "assert_no_forbidden",
           "calls_table", "case_for", "expected_calls"]
