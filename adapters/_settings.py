"""The one reader of trajcheck settings inside a host: constructor, test case/sample/reference
and the host's vars, read with the same rules in every adapter.

Every adapter (DeepEval, RAGAS, LangSmith, MLflow, Inspect AI, pydantic-evals, promptfoo)
hands this module its *layers* of settings -- what the metric's constructor (or promptfoo's
assertion ``config``) says, and what the test case says (DeepEval metadata, a RAGAS
sample's first ``HumanMessage`` metadata, a LangSmith/MLflow reference, an Inspect sample's
or pydantic-evals case's metadata, promptfoo test vars) -- and gets one ``Case`` back from
:func:`resolve`. The rules (docs/hosts/<host>.md say them for users):

* **Every key is known**, at every level: a settings mapping (:func:`read`), each expected
  call inside it (``name``, ``args``, ``match``, ``args_mode``: ``"arg"`` or MLflow's
  ``"arguments"`` is an error naming ``args``), and ``match`` (keyed by tool name or
  ``"*"``; an argument name used as a key is an error naming the fix). Unknown keys raise
  ``DatasetError`` with the closest known key.
* **One namespace per host** (:func:`namespaced`): in a mapping a team shares with its own
  data (DeepEval metadata, RAGAS message metadata, Inspect/pydantic-evals metadata, promptfoo
  vars), trajcheck reads its ``"trajcheck"`` block, and only that block when it is there.
  Without one, the keys only trajcheck uses (:data:`OWN_KEYS`: ``expected_calls``,
  ``forbidden_calls``, ...) are read from the top level too; names a team may use for its
  own data (:data:`SHARED_NAMES`: ``user``, ``tools``, ``match``, ``metric``, ...) are read
  only inside the block, and a top-level near miss of a trajcheck key (``forbiden_calls``)
  is an error. So a team's ``ticket`` or ``user`` key never makes a metric raise.
* **Lists** in the host's own convention: promptfoo writes lists of names as comma strings
  (``forbidden_calls: "drop_db, delete_namespace"``, split as promptfoo's tool assertions
  split them); every other host takes a list, and a string there is an error naming the fix.
* **One precedence** (:func:`merge`): the lists :data:`UNION_KEYS` (forbidden, optional and
  read-only calls, forbidden sequences, precedence rules, required response text) are the
  union of every layer; ``match`` is merged per tool and argument; any other setting given
  in two layers with different values is an error naming both places.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from difflib import get_close_matches
from typing import Any

from trajcheck.errors import DatasetError
from trajcheck.model import Case, ExpectedCall, check_case_field, did_you_mean

from ._catalog import CASE_KEYS, ROW_KEYS

#: Keys a settings mapping may hold (case fields and per-row data).
SETTING_KEYS: tuple[str, ...] = CASE_KEYS + ROW_KEYS
#: Settings whose value is a list and whose layers are joined (union, first-seen order).
UNION_KEYS: tuple[str, ...] = tuple(k for k in (
    "optional_calls", "forbidden_calls", "read_only_calls", "forbidden_sequences", "precedence",
    "response_must_include", "claim_patterns", "negation_patterns") if k in SETTING_KEYS)
#: Settings that are lists of names (a promptfoo comma string is split into one).
NAME_LIST_KEYS: tuple[str, ...] = tuple(k for k in (
    "optional_calls", "forbidden_calls", "read_only_calls", "response_must_include") if k in SETTING_KEYS)
#: Setting names a team may well use for its own data in a shared mapping (metadata, vars):
#: read only inside the ``"trajcheck"`` block there.
SHARED_NAMES: frozenset[str] = frozenset({
    "user", "tools", "match", "threshold", "faults", "initial_state", "expected_route", "metric", "mode", "dialect", "format", "source", "cases",
    "weights", "ignore", "id_args", "retry_budget", "error_pattern", "case_id",
})
#: Setting names only trajcheck uses: read at the top level of a shared mapping too.
OWN_KEYS: tuple[str, ...] = tuple(k for k in SETTING_KEYS if k not in SHARED_NAMES)
#: Row keys that describe the run's calls by index (DeepEval's flat ``tools_called`` list has no
#: error flag or step grouping): read by the DeepEval adapter only, an error elsewhere, where
#: the run itself marks failed calls and steps.
FLAT_RUN_KEYS: tuple[str, ...] = ("failed_calls", "parallel_calls")
#: Keys of one expected call.
CALL_KEYS: tuple[str, ...] = ("name", "args", "match", "args_mode")
#: Other hosts' names for an expected call's keys, and trajcheck's.
_CALL_KEY_FIXES: dict[str, str] = {
    "arguments": "args", "arg": "args", "input_parameters": "args", "parameters": "args",
    "params": "args", "input": "args", "tool": "name", "tool_name": "name", "function": "name",
}


@dataclass(frozen=True)
class Layer:
    """One place settings come from: ``where`` names it in messages (``"ForbiddenCallsMetric(...)"``,
    ``"test_case.metadata['trajcheck']"``); ``values`` its settings (already :func:`read`);
    ``per_case``: it belongs to one test case, so its ``match`` keys must name that case's
    expected calls (a constructor's ``match`` serves every case and may name tools a case
    does not expect)."""

    where: str
    values: Mapping[str, Any]
    per_case: bool = True


def split_names(value: str) -> list[str]:
    """``"drop_db, delete_namespace"`` -> ``["drop_db", "delete_namespace"]``: split on commas,
    blanks stripped, empty items dropped (promptfoo's own ``tool-call`` assertions read a
    comma string of tool names this way)."""
    return [p.strip() for p in value.split(",") if p.strip()]


def read(block: Any, where: str, *, comma_lists: bool = False,
         extra_keys: Sequence[str] = ()) -> dict[str, Any]:
    """Check one settings mapping and return it as a dict (None is ``{}``).

    Args:
        block: the mapping (metadata block, reference, constructor settings, vars).
        where: what to name in messages (``"test_case.metadata['trajcheck']"``).
        comma_lists: the host writes lists of names as comma strings (promptfoo): such a
            string is split (:func:`split_names`); elsewhere a string there is an error.
        extra_keys: the host's own keys allowed beside the settings (left in the result).

    Returns:
        The settings, with name lists as lists; None values kept (unset).

    Raises:
        DatasetError: naming ``where`` and the key for an unknown key (with the closest
            known one), a list given as a string (with the list to write), an expected call
            with an unknown key (``"arg"``/``"arguments"`` -> ``args``) or no name, and a
            ``match`` that is not ``{tool or "*": {argument: spec}}``.
    """
    if block is None:
        return {}
    if not isinstance(block, Mapping):
        raise DatasetError(f"{where}: expected a dict of trajcheck settings, got {type(block).__name__}")
    known = frozenset(SETTING_KEYS) | frozenset(extra_keys)
    out: dict[str, Any] = {}
    for k, v in block.items():
        if not isinstance(k, str):
            raise DatasetError(f"{where}: keys must be strings, got {k!r}")
        if k not in known:
            raise DatasetError(f"{where}: unknown key {k!r}{did_you_mean(k, known)}; "
                               f"known: {', '.join(sorted(known))}")
        if k in NAME_LIST_KEYS and isinstance(v, str) and comma_lists:
            v = split_names(v)
        try:
            if k != "expected_calls":  # check_calls below names the call and its key
                check_case_field(k, v)  # a string for a list of names is an error (one-letter names)
        except DatasetError as e:
            raise DatasetError(f"{where}: {e}") from e
        out[k] = v
    if out.get("expected_calls") is not None:
        check_calls(out["expected_calls"], f"{where}: expected_calls")
    if out.get("match") is not None:
        check_match(out["match"], f"{where}: match")
    return out


def check_calls(calls: Any, where: str) -> None:
    """Check a list of expected calls: names, or dicts with only :data:`CALL_KEYS` (another
    host's name for one, such as MLflow's ``arguments``, is an error naming ``args``). Chat
    messages (a dict with ``role``/``type``, a reference trajectory) are left to the
    trajectory reader. Raises ``DatasetError`` naming ``where`` and the call's index."""
    if isinstance(calls, (str, bytes)) or not isinstance(calls, Sequence):
        if isinstance(calls, Mapping):
            return  # a reference trajectory ({"messages": [...]}), read by the trajectory reader
        raise DatasetError(f"{where}: expected a list of calls, got {type(calls).__name__}")
    for i, c in enumerate(calls):
        if isinstance(c, (str, ExpectedCall)):
            continue
        if not isinstance(c, Mapping):
            raise DatasetError(f"{where}[{i}]: expected a tool name or a {{name, args}} dict, "
                               f"got {type(c).__name__}")
        if "role" in c or ("type" in c and "name" not in c):
            continue  # a chat message: the reference is a trajectory
        for k in c:
            if k in CALL_KEYS:
                continue
            fix = _CALL_KEY_FIXES.get(str(k))
            hint = f"; write {fix!r}" if fix else did_you_mean(str(k), CALL_KEYS)
            raise DatasetError(f"{where}[{i}]: unknown key {k!r} in an expected call{hint} "
                               f"(an expected call is {{'name', 'args', 'match', 'args_mode'}})")
        if not isinstance(c.get("name"), str) or not c.get("name"):
            raise DatasetError(f"{where}[{i}]: an expected call needs a non-empty 'name', got {c!r}")


def _looks_like_spec(v: Any) -> bool:
    """A matcher spec (a name string, or a dict with a ``type``) rather than ``{arg: spec}``."""
    return isinstance(v, str) or (isinstance(v, Mapping) and isinstance(v.get("type"), str))


def check_match(match: Any, where: str, expected_names: Sequence[str] | None = None, *,
                per_case: bool = True) -> None:
    """Check ``match``: ``{tool name or "*": {argument: matcher spec}}``.

    ``expected_names``: the case's expected tool names (None: not known yet, only the shape
    is checked). A key that names none of them is an error when ``per_case`` (the match
    belongs to this one case) or when its value is a matcher spec (an argument name used as
    the key: ``{"order_id": {"type": "numeric"}}``); a constructor's match (``per_case``
    False) may name tools other cases expect. Raises ``DatasetError`` naming ``where`` and
    the fix."""
    if not isinstance(match, Mapping):
        raise DatasetError(f"{where}: expected {{tool or '*': {{argument: matcher}}}}, got {type(match).__name__}")
    for key, spec in match.items():
        if not isinstance(key, str):
            raise DatasetError(f"{where}: keys are tool names or '*', got {key!r}")
        shown = json.dumps(spec) if _jsonable(spec) else "..."
        fix = (f"match is keyed by tool name, then argument: to match argument {key!r} of every "
               f"tool write {{'*': {{{key!r}: {shown}}}}}, or give match inside the expected call")
        if not isinstance(spec, Mapping):
            raise DatasetError(f"{where}[{key!r}]: {fix}")
        if key == "*" or expected_names is None or key in expected_names:
            continue
        if _looks_like_spec(spec):
            raise DatasetError(f"{where}[{key!r}]: {key!r} is not an expected call here; {fix}")
        if per_case:
            raise DatasetError(f"{where}: {key!r} is not one of this case's expected calls "
                               f"({', '.join(sorted(set(expected_names))) or 'none'})"
                               f"{did_you_mean(key, expected_names)}; match is keyed by tool name, "
                               "or '*' for every tool")


def _jsonable(v: Any) -> bool:
    try:
        json.dumps(v)
    except (TypeError, ValueError):
        return False
    return True


def _near_block_name(k: Any) -> bool:
    """True for a key that looks like a misspelling of ``trajcheck`` (``trajchek``,
    ``Trajcheck``, ``trajcheck_``), so the block it was meant to be is not ignored whole. A
    team's own name that only starts with the word (``trajcheck_id``, ``trajcheck-run``) is
    not: it is ``trajcheck``, a separator and a word of two or more characters."""
    if not isinstance(k, str) or k == "trajcheck":
        return False
    low = k.lower()
    if re.fullmatch(r"trajcheck[_\-.:][a-z0-9][a-z0-9_\-.]+", low):
        return False
    return bool(get_close_matches(low, ["trajcheck"], n=1, cutoff=0.8))


def namespaced(shared: Any, where: str, *, comma_lists: bool = False,
               extra_keys: Sequence[str] = ()) -> dict[str, Any]:
    """trajcheck's settings in a mapping shared with the team's own data (see the module doc).

    Args:
        shared: DeepEval ``test_case.metadata``, a RAGAS message's ``metadata``, an Inspect
            sample's or pydantic-evals case's ``metadata``, promptfoo ``vars`` (None: ``{}``).
        where: its name in messages.
        comma_lists, extra_keys: as in :func:`read` (``extra_keys``: the host's own option
            names, read inside the block only).

    Returns:
        ``shared["trajcheck"]`` read strictly when present (promptfoo may give it as a JSON
        string); else the :data:`OWN_KEYS` found at the top level.

    Raises:
        DatasetError: for a bad block (:func:`read`), a top-level near miss of a trajcheck
            key, or a top-level shared name (``match``, ``tools``, ...) beside top-level
            trajcheck keys (it would be ignored: the error says to use the block).
    """
    if not shared:
        return {}
    if not isinstance(shared, Mapping):
        raise DatasetError(f"{where} must be a dict, got {type(shared).__name__}")
    for k in shared:  # a misspelled block would be ignored whole: the team's keys are not read
        if _near_block_name(k):
            raise DatasetError(f"{where}: {k!r} is not read (did you mean 'trajcheck'?); trajcheck's "
                               f"settings go in {where}['trajcheck']")
    if "trajcheck" in shared and shared["trajcheck"] is not None:
        inner = shared["trajcheck"]
        if isinstance(inner, str) and inner.strip()[:1] == "{":
            try:
                inner = json.loads(inner)
            except json.JSONDecodeError as e:
                raise DatasetError(f"{where}['trajcheck']: not valid JSON ({e.msg})") from e
        if not isinstance(inner, Mapping):
            raise DatasetError(f"{where}['trajcheck'] must be a dict, got {type(inner).__name__}")
        beside = [k for k in OWN_KEYS if k in shared]
        if beside:  # read from one place only: a key left outside the block would be ignored
            raise DatasetError(f"{where}: {beside[0]!r} is beside {where}['trajcheck'] and would not be "
                               f"read; move it into the block")
        return read(inner, f"{where}['trajcheck']", comma_lists=comma_lists, extra_keys=extra_keys)
    own = {k: shared[k] for k in OWN_KEYS if k in shared}
    for k in shared:
        if not isinstance(k, str) or k in own or k.startswith("_"):
            continue
        if k in SHARED_NAMES:
            if own:
                raise DatasetError(f"{where}: {k!r} beside trajcheck's {sorted(own)[0]!r} is not read at "
                                   f"the top level (a team may use that name for its own data); put "
                                   f"trajcheck's settings in {where}['trajcheck']")
            continue
        close = get_close_matches(k, SETTING_KEYS, n=1, cutoff=0.85)
        if close and close[0] not in SHARED_NAMES:
            raise DatasetError(f"{where}: {k!r} is not a trajcheck key{did_you_mean(k, SETTING_KEYS)}; "
                               f"rename it, or put trajcheck's settings in {where}['trajcheck']")
    return read(own, where, comma_lists=comma_lists)


def _freeze(v: Any) -> str:
    try:
        return json.dumps(v, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr(v)


def merge(layers: Sequence[Layer], case_id: str) -> dict[str, Any]:
    """The settings of one case from its layers (see the module doc for the precedence).

    Returns:
        One dict: :data:`UNION_KEYS` joined in layer order (each item once); ``match``
        merged per tool and argument; every other key from the one layer that sets it.

    Raises:
        DatasetError: naming the case, the key and both layers when two layers set a
            setting (or one argument's matcher) to different values.
    """
    out: dict[str, Any] = {}
    origin: dict[str, str] = {}
    match: dict[str, dict[str, Any]] = {}
    match_origin: dict[tuple[str, str], str] = {}
    for layer in layers:
        for k, v in layer.values.items():
            if v is None:
                continue
            if k in UNION_KEYS:
                have = out.setdefault(k, [])
                seen = {_freeze(x) for x in have}
                have.extend(x for x in v if _freeze(x) not in seen)
                continue
            if k == "match":
                for tool, specs in v.items():
                    for arg, spec in specs.items():
                        prev = match.setdefault(tool, {})
                        if arg in prev and _freeze(prev[arg]) != _freeze(spec):
                            raise DatasetError(
                                f"case {case_id!r}: match[{tool!r}][{arg!r}] is {prev[arg]!r} in "
                                f"{match_origin[(tool, arg)]} and {spec!r} in {layer.where}; set it in one place")
                        prev[arg] = spec
                        match_origin[(tool, arg)] = layer.where
                continue
            if k in out and _freeze(out[k]) != _freeze(v):
                raise DatasetError(f"case {case_id!r}: {k} is {_short(out[k])} in {origin[k]} and "
                                   f"{_short(v)} in {layer.where}; set it in one place (lists such as "
                                   f"{', '.join(UNION_KEYS[:2])} are joined, other settings are not)")
            out[k] = v
            origin[k] = layer.where
    if match:
        out["match"] = match
    return out


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class Resolved:
    """What :func:`resolve` gives: the ``case`` (matchers attached), the merged ``settings``
    (row keys such as ``before_state`` included) and the reference fields ``provided``."""

    case: Case
    settings: Mapping[str, Any]
    provided: frozenset[str]


def check_flat_run_keys(settings: Mapping[str, Any], where: str) -> None:
    """Raise ``DatasetError`` when ``settings`` holds a :data:`FLAT_RUN_KEYS` key: outside
    DeepEval it would be accepted and do nothing; the error says where the run marks it."""
    for k in FLAT_RUN_KEYS:
        if settings.get(k) is not None:
            raise DatasetError(
                f"{where}: {k!r} is read from DeepEval test cases only (its ToolCall list has no error "
                "flag or step); here the run marks them itself: a failed result by its error flag "
                "(a tool message's is_error/error/status, an ERROR span) or error_pattern, calls issued "
                "together by one assistant message or model span")


def resolve(case_id: str, case_input: Any, host_expected: Sequence[ExpectedCall] | None,
            layers: Sequence[Layer], *, expected_given: bool = False, flat_run: bool = False) -> Resolved:
    """One case from a host's expected calls and its settings layers.

    Args:
        case_id: the case's name in messages.
        case_input: the user input.
        host_expected: the expected calls in the host's own field (DeepEval
            ``expected_tools``, RAGAS ``reference_tool_calls``, ...); an ``expected_calls``
            setting replaces them.
        layers: :class:`Layer` s, each already :func:`read`.
        expected_given: the host's own expected-call field was set (even to ``[]``: the
            no-tool case).
        flat_run: the host's run is a flat call list that :data:`FLAT_RUN_KEYS` index
            (DeepEval); elsewhere those keys are an error (:func:`check_flat_run_keys`).

    Returns:
        :class:`Resolved`.

    Raises:
        DatasetError: naming the case and field for conflicting layers (:func:`merge`), a
            bad value (``Case.from_dict``'s checks) or a per-case ``match`` key that names
            no expected call.
    """
    from ._case import apply_match, build_case, provided_keys

    merged = merge(layers, case_id)
    if not flat_run:
        check_flat_run_keys(merged, f"case {case_id!r}")
    case = build_case(case_id, case_input, host_expected, {k: v for k, v in merged.items() if k != "match"})
    match = merged.get("match")
    if match:
        names = [e.name for e in case.expected_calls]
        for layer in layers:
            m = layer.values.get("match")
            if m:
                check_match(m, f"{layer.where}['match']", names, per_case=layer.per_case)
        case = replace(case, expected_calls=apply_match(case.expected_calls, match))
    given = expected_given or merged.get("expected_calls") is not None
    return Resolved(case, merged, provided_keys(merged, expected=given))
