"""Fault injection for tools: realistic failures, deterministic given a seed.

``flaky(tool_fn, fail_rate, error, seed)`` wraps one tool; ``apply_faults(tools, faults)``
wraps a whole tool set from a case's ``faults`` field. A fault either raises
``InjectedFault`` (which ``trajcheck.run.sandbox.call_tool`` turns into an error ``ToolResult``
whose ``error`` is the fault's message and ``output`` its payload) or, for
``empty_result``, returns an empty value without calling the tool.

The fault library (``FAULT_KINDS``), each message modelled on what real services return:

=====================  =====================================================================
``http_503``           ``HTTP 503 Service Unavailable: <tool> is temporarily unavailable; retry later``
``timeout``            ``TimeoutError: <tool> did not respond within <timeout_s> s``
``schema_validation``  ``ValidationError: invalid value <v> for '<field>'; valid values: a, b, c``
``empty_result``       the tool is not run and returns ``empty`` (default ``[]``)
``permission_denied``  ``HTTP 403 Forbidden: permission denied for <tool>``
=====================  =====================================================================

The ``faults`` field of a case (a list; shape in ``FAULT_SPEC_SCHEMA``)::

    {"tool": "create_ticket", "fault": "http_503", "times": 1}            # first call fails
    {"tool": "search_docs", "fault": "timeout", "rate": 0.3, "seed": 1}   # 30% of calls, seeded
    {"tool": "create_ticket", "fault": "schema_validation", "field": "priority",
     "valid": ["low", "medium", "high"]}

Keys: ``tool`` (required; ``"*"`` means every tool), ``fault`` (required, a kind above),
``times`` (fail the first N eligible calls, N >= 1) or ``rate`` (each eligible call fails
with this probability, 0..1, drawn from ``random.Random`` seeded by ``seed``, the trial
number and the tool name) -- not both; neither means ``times: 1``. ``after`` (default 0)
makes the first N calls of the tool pass before faults apply. ``message`` overrides the
text; ``status`` the HTTP code (``http_503``/``permission_denied``); ``timeout_s`` the
timeout (default 30); ``field``/``valid``/``value`` the validation error (when ``valid`` is
absent it is read from the case's tool definition enum for ``field`` if one is given);
``empty`` the value ``empty_result`` returns. Several specs for one tool apply in order;
the first that fires wins.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import DatasetError

FAULT_KINDS: tuple[str, ...] = (
    "http_503", "timeout", "schema_validation", "empty_result", "permission_denied",
)

#: JSON-Schema fragment for one entry of a case's ``faults`` list.
FAULT_SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["tool", "fault"],
    "additionalProperties": False,
    "properties": {
        "tool": {"type": "string", "minLength": 1},
        "fault": {"enum": list(FAULT_KINDS)},
        "times": {"type": "integer", "minimum": 1},
        "rate": {"type": "number", "minimum": 0, "maximum": 1},
        "seed": {"type": "integer"},
        "after": {"type": "integer", "minimum": 0},
        "message": {"type": "string"},
        "status": {"type": "integer", "minimum": 100, "maximum": 599},
        "timeout_s": {"type": "number", "exclusiveMinimum": 0},
        "field": {"type": "string"},
        "valid": {"type": "array"},
        "value": {},
        "empty": {},
    },
    "not": {"required": ["times", "rate"]},
}

__all__ = [
    "FAULT_KINDS",
    "FAULT_SPEC_SCHEMA",
    "Fault",
    "FaultyTool",
    "InjectedFault",
    "apply_faults",
    "flaky",
    "make_fault",
    "parse_faults",
]


class InjectedFault(Exception):
    """Raised by a faulty tool. ``kind`` is the fault kind, ``message`` the full error text
    the agent sees, ``payload`` a JSON-ready error body (e.g. ``{"error": {"code": 503, ...}}``)."""

    def __init__(self, kind: str, message: str, payload: Any = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.payload = payload


@dataclass(frozen=True)
class Fault:
    """One fault: what happens to a call when it fires.

    ``kind`` in ``FAULT_KINDS``; ``message`` None builds the default text for the tool;
    ``status``/``timeout_s``/``field``/``valid``/``value``/``empty`` as in the module doc.
    ``fire(tool_name, args)`` raises ``InjectedFault``, or returns the empty value for
    ``empty_result``.
    """

    kind: str
    message: str | None = None
    status: int | None = None
    timeout_s: float = 30.0
    field: str | None = None
    valid: tuple[Any, ...] | None = None
    value: Any = None
    empty: Any = dataclasses.field(default_factory=list)

    def fire(self, tool_name: str, args: Mapping[str, Any]) -> Any:
        """Apply the fault to one call of ``tool_name`` with ``args``."""
        k = self.kind
        if k == "empty_result":
            return json.loads(json.dumps(self.empty)) if self.empty is not None else None
        if k == "http_503":
            code = self.status or 503
            msg = self.message or (f"HTTP {code} Service Unavailable: {tool_name} is temporarily "
                                   "unavailable; retry later")
            raise InjectedFault(k, msg, {"error": {"code": code, "message": "Service Unavailable"}})
        if k == "timeout":
            msg = self.message or f"TimeoutError: {tool_name} did not respond within {self.timeout_s:g} s"
            raise InjectedFault(k, msg, {"error": {"code": "timeout", "timeout_s": self.timeout_s}})
        if k == "permission_denied":
            code = self.status or 403
            msg = self.message or f"HTTP {code} Forbidden: permission denied for {tool_name}"
            raise InjectedFault(k, msg, {"error": {"code": code, "message": "Forbidden"}})
        if k == "schema_validation":
            fld = self.field
            if fld is None:
                fld = next(iter(args), "input") if args else "input"
            bad = self.value if self.value is not None else args.get(fld)
            msg = self.message or f"ValidationError: invalid value {json.dumps(bad, default=str)} for {fld!r}"
            if self.message is None and self.valid:
                msg += "; valid values: " + ", ".join(str(v) for v in self.valid)
            raise InjectedFault(k, msg, {"error": {"code": 422, "field": fld, "value": bad,
                                                   "valid": list(self.valid or ())}})
        raise DatasetError(f"unknown fault kind {k!r}; known: {', '.join(FAULT_KINDS)}")


def make_fault(error: str | Fault | BaseException | type[BaseException] | Mapping[str, Any]) -> Fault | BaseException | type[BaseException]:
    """Normalise ``flaky``'s ``error``: a kind name, a ``Fault``, a spec dict (``{"fault": kind,
    ...}``), or an exception instance/class raised as is. Raises DatasetError for an unknown kind."""
    if isinstance(error, Fault):
        return error
    if isinstance(error, str):
        if error not in FAULT_KINDS:
            raise DatasetError(f"unknown fault {error!r}; known: {', '.join(FAULT_KINDS)}")
        return Fault(error)
    if isinstance(error, Mapping):
        return _fault_from_spec(error, where="fault")
    if isinstance(error, BaseException) or (isinstance(error, type) and issubclass(error, BaseException)):
        return error
    raise DatasetError(f"fault must be a kind name, Fault, spec dict or exception, got {type(error).__name__}")


class FaultyTool:
    """A tool wrapped with faults: calls it, or fires a fault instead.

    State (per instance, so one per trial): ``calls`` (calls seen), ``injected`` (faults
    fired). ``rules``: ``(fault, times, rate, rng, after)`` tuples checked in order; the
    first that fires wins. Calling ``FaultyTool(**args)`` keeps the tool's signature
    by keyword; positional arguments are passed through.
    """

    def __init__(self, fn: Callable[..., Any], name: str,
                 rules: Sequence[tuple[Fault | BaseException | type[BaseException], int | None,
                                       float | None, random.Random | None, int]]) -> None:
        self.fn = fn
        self.name = name
        self.rules = list(rules)
        self.calls = 0
        self.injected = 0
        self._fired = [0] * len(self.rules)
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        n = self.calls
        self.calls += 1
        for r, (fault, times, rate, rng, after) in enumerate(self.rules):
            if n < after:
                continue
            if rate is not None and rng is not None:
                fires = rng.random() < rate  # one draw per eligible call keeps the sequence fixed
            else:
                fires = self._fired[r] < (times or 1)
            if not fires:
                continue
            self._fired[r] += 1
            self.injected += 1
            if isinstance(fault, Fault):
                return fault.fire(self.name, kwargs)
            raise fault
        return self.fn(*args, **kwargs)


def _rng(seed: Any, tool: str, trial: int) -> random.Random:
    return random.Random(f"trajcheck-faults:{seed}:{tool}:{trial}")


def flaky(tool_fn: Callable[..., Any], fail_rate: float, error: Any = "http_503", seed: int = 0, *,
          name: str | None = None, trial: int = 0) -> FaultyTool:
    """Wrap ``tool_fn`` so each call fails with probability ``fail_rate``.

    ``fail_rate`` in [0, 1]; ``error`` a fault kind (default ``"http_503"``), a ``Fault``, a
    spec dict or an exception to raise; ``seed`` and ``trial`` fix the random sequence:
    the same (seed, tool name, trial) always fails the same calls. ``name`` defaults to
    ``tool_fn.__name__``. Returns a ``FaultyTool`` (its ``calls``/``injected`` counters show
    what happened). Raises DatasetError for a rate outside [0, 1] or an unknown kind.
    """
    if isinstance(fail_rate, bool) or not isinstance(fail_rate, (int, float)) or not 0 <= fail_rate <= 1:
        raise DatasetError(f"fail_rate must be a number in [0, 1], got {fail_rate!r}")
    nm = str(name or getattr(tool_fn, "__name__", None) or "tool")
    return FaultyTool(tool_fn, nm, [(make_fault(error), None, float(fail_rate), _rng(seed, nm, trial), 0)])


def _fault_from_spec(spec: Mapping[str, Any], *, where: str,
                     tool_defs: Mapping[str, Mapping[str, Any]] | None = None) -> Fault:
    kind = spec.get("fault")
    if kind not in FAULT_KINDS:
        raise DatasetError(f"{where}.fault: unknown fault {kind!r}; known: {', '.join(FAULT_KINDS)}")
    valid = spec.get("valid")
    fld = spec.get("field")
    if kind == "schema_validation" and valid is None and fld and tool_defs:
        valid = _enum_from_tool(tool_defs.get(str(spec.get("tool"))), fld)
    if valid is not None and not isinstance(valid, (list, tuple)):
        raise DatasetError(f"{where}.valid: must be a list")
    return Fault(kind=kind, message=spec.get("message"), status=spec.get("status"),
                 timeout_s=float(spec.get("timeout_s", 30.0)), field=fld,
                 valid=tuple(valid) if valid is not None else None, value=spec.get("value"),
                 empty=spec.get("empty", []))


def _enum_from_tool(tool: Mapping[str, Any] | None, fld: str) -> list[Any] | None:
    """The enum of parameter ``fld`` in an OpenAI/Anthropic/plain tool definition, if any."""
    if not isinstance(tool, Mapping):
        return None
    f = tool.get("function")
    fn: Mapping[str, Any] = f if isinstance(f, Mapping) else tool
    params = fn.get("parameters") or fn.get("input_schema") or {}
    prop = (params.get("properties") or {}).get(fld) if isinstance(params, Mapping) else None
    if isinstance(prop, Mapping) and isinstance(prop.get("enum"), list):
        return list(prop["enum"])
    return None


def parse_faults(faults: Sequence[Mapping[str, Any]] | None, *, case_id: str | None = None,
                 tools: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """Validate a case's ``faults`` list and return normalised copies.

    Checks each entry against the shape in the module doc (``FAULT_SPEC_SCHEMA``) without
    needing jsonschema, and fills ``valid`` for ``schema_validation`` from ``tools`` (the
    case's tool definitions) when absent. Raises DatasetError naming the case, the entry
    index and the field, e.g. ``case 'c1': faults[1].rate: must be a number in [0, 1]``.
    """
    out: list[dict[str, Any]] = []
    pre = f"case {case_id!r}: " if case_id is not None else ""
    known = set(FAULT_SPEC_SCHEMA["properties"])
    for i, f in enumerate(faults or ()):
        where = f"{pre}faults[{i}]"
        if not isinstance(f, Mapping):
            raise DatasetError(f"{where}: must be an object, got {type(f).__name__}")
        extra = set(f) - known
        if extra:
            raise DatasetError(f"{where}: unknown key(s) {sorted(extra)}; known: {sorted(known)}")
        if not isinstance(f.get("tool"), str) or not f.get("tool"):
            raise DatasetError(f"{where}.tool: required, a tool name (or '*')")
        if f.get("fault") not in FAULT_KINDS:
            raise DatasetError(f"{where}.fault: unknown fault {f.get('fault')!r}; known: {', '.join(FAULT_KINDS)}")
        if "times" in f and "rate" in f:
            raise DatasetError(f"{where}: give 'times' or 'rate', not both")
        t = f.get("times")
        if t is not None and (isinstance(t, bool) or not isinstance(t, int) or t < 1):
            raise DatasetError(f"{where}.times: must be an integer >= 1, got {t!r}")
        r = f.get("rate")
        if r is not None and (isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 <= r <= 1):
            raise DatasetError(f"{where}.rate: must be a number in [0, 1], got {r!r}")
        a = f.get("after", 0)
        if isinstance(a, bool) or not isinstance(a, int) or a < 0:
            raise DatasetError(f"{where}.after: must be an integer >= 0, got {a!r}")
        s = f.get("seed", 0)
        if isinstance(s, bool) or not isinstance(s, int):
            raise DatasetError(f"{where}.seed: must be an integer, got {s!r}")
        d = dict(f)
        if d["fault"] == "schema_validation" and d.get("valid") is None and d.get("field"):
            defs = {str(td.get("name") or (td.get("function") or {}).get("name")): td for td in tools
                    if isinstance(td, Mapping)}
            v = _enum_from_tool(defs.get(d["tool"]), d["field"])
            if v is not None:
                d["valid"] = v
        _fault_from_spec(d, where=where)  # checks valid's type
        out.append(d)
    return out


def apply_faults(tools: Mapping[str, Callable[..., Any]], faults: Sequence[Mapping[str, Any]] | None, *,
                 trial: int = 0, case_id: str | None = None,
                 tool_defs: Sequence[Mapping[str, Any]] = ()) -> dict[str, Callable[..., Any]]:
    """Wrap a tool set ``{name: fn}`` with a case's ``faults`` for one trial.

    Returns a new dict: tools with at least one matching spec (by name, or ``"*"``) become
    ``FaultyTool`` instances with fresh counters; the rest are returned unchanged. Rate
    faults draw from ``random.Random`` seeded by (spec ``seed``, tool name, ``trial``), so
    a trial is reproducible and different trials see different draws. A spec naming a tool
    that is not in ``tools`` raises DatasetError (a typo would silently test nothing).
    ``tool_defs``: the case's tool definitions, used to list valid enum values.
    """
    specs = parse_faults(faults, case_id=case_id, tools=tool_defs)
    pre = f"case {case_id!r}: " if case_id is not None else ""
    for i, s in enumerate(specs):
        if s["tool"] != "*" and s["tool"] not in tools:
            raise DatasetError(f"{pre}faults[{i}].tool: no tool named {s['tool']!r}; "
                               f"tools: {', '.join(sorted(tools))}")
    out: dict[str, Callable[..., Any]] = {}
    for name, fn in tools.items():
        rules: list[tuple[Fault | BaseException | type[BaseException], int | None, float | None,
                          random.Random | None, int]] = []
        for i, s in enumerate(specs):
            if s["tool"] not in (name, "*"):
                continue
            fault = _fault_from_spec(s, where=f"{pre}faults[{i}]")
            if "rate" in s:
                rules.append((fault, None, float(s["rate"]), _rng(s.get("seed", 0), name, trial),
                              s.get("after", 0)))
            else:
                rules.append((fault, int(s.get("times", 1)), None, None, s.get("after", 0)))
        out[name] = FaultyTool(fn, name, rules) if rules else fn
    return out
