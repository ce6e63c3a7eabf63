"""trajcheck as a promptfoo Python assertion (promptfoo 0.123.x, ``type: python``).

User guide (every config and vars key, output shapes, errors): docs/hosts/promptfoo.md.

Use it from a promptfoo config::

    assert:
      - type: python                      # or not-python
        value: file://path/to/promptfoo_provider/assertion.py
        config:
          expected_calls: [search_flights, {name: book_flight, args: {flight_id: FL100}}]
          optional_calls: [get_weather]
          metric: f1                      # f1 (default) | trajectory_match | forbidden | composite
          threshold: 1.0

promptfoo calls ``get_assert(output, context)`` in a fresh Python process per assertion, so
this module imports only what the chosen metric needs. Run promptfoo with
``PROMPTFOO_PYTHON=<venv>/bin/python`` so that the venv holding ``trajcheck`` is used.

This file only translates: promptfoo's output/context -> (``Trajectory``, ``Case``) ->
a trajcheck metric -> promptfoo's grading result. No metric logic lives here.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping
from typing import Any

try:  # imported as trajcheck.promptfoo.assertion (installed package, tests, library use)
    from ._read import CASE_KEYS, InputProblem, build_case, maybe_json, read_output
except ImportError:  # loaded by path by promptfoo, whose wrapper puts this directory on sys.path
    from _read import CASE_KEYS, InputProblem, build_case, maybe_json, read_output  # type: ignore[no-redef]

#: promptfoo-flavoured names of the catalog's metrics (the catalog keys work as they are).
METRIC_ALIASES = {
    "f1": "tool_call_f1", "tool-call-f1": "tool_call_f1", "prf": "tool_call_f1",
    "tool_call_prf": "tool_call_f1", "trajectory": "trajectory_match", "match": "trajectory_match",
    "forbidden": "forbidden_calls", "forbidden_sequences": "forbidden_calls",
    "score_trajectory": "composite", "argument_correctness": "argument_accuracy",
    "ordering": "ordering_accuracy", "precedence": "ordering_accuracy", "outcome": "task_success",
}
# keys of the assertion config besides the expectation keys (CASE_KEYS) read from config/vars
OPTION_KEYS = ("metric", "mode", "dialect", "threshold", "source", "format", "case_id",
               "error_pattern", "weights", "ignore", "id_args", "retry_budget", "cases")
# per-run data keys (the database before/after the run, argument matchers per tool)
ROW_KEYS = ("before_state", "after_state", "match")
NEUTRAL_MODES = ("exact", "in_order", "unordered", "superset", "subset")


def _fail(reason: str, *, negated: bool = False) -> dict[str, Any]:
    """A failed grading result (promptfoo needs pass, score and reason; notes §1.4).

    For a negated assertion promptfoo flips ``pass`` after we return, so an input error is
    returned as pass=True there: after the flip the assertion still fails (the reason is
    repeated in a component result, since promptfoo replaces a flipped result's reason).
    """
    reason = f"trajcheck: {reason}"
    # promptfoo replaces a flipped result's reason with its own; keep ours in a component
    components = [{"pass": False, "score": 0.0, "reason": reason}] if negated else []
    return {"pass": negated, "score": 0.0, "reason": reason,
            "componentResults": components, "namedScores": {}}


def _assertion_entries(test: Any) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    stack = list(test.get("assert") or []) if isinstance(test, Mapping) else []
    while stack:
        a = stack.pop(0)
        if not isinstance(a, Mapping):
            continue
        if a.get("type") == "assert-set":
            stack.extend(a.get("assert") or [])
        else:
            out.append(a)
    return out


def find_own_assertion(context: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, bool]:
    """Locate this assertion in ``context["test"]["assert"]`` -> ``(entry or None, negated)``.

    promptfoo does not tell a Python assertion whether it was written as ``python`` or
    ``not-python`` (it applies the ``not-`` itself after the call, notes §1.4), so the
    candidates are the test's ``python``/``not-python`` entries (also inside ``assert-set``)
    whose ``config`` equals ``context["config"]``; among them, those whose ``file://`` value
    names this file are preferred. Raises ``InputProblem`` when the candidates disagree on
    negation (give the two assertions different configs). No candidate -> (None, False).
    """
    cfg = context.get("config")
    here = os.path.basename(__file__)
    cands = [a for a in _assertion_entries(context.get("test"))
             if a.get("type") in ("python", "not-python") and a.get("config") == cfg]
    names = {here, "trajcheck_assert.py"}  # this file, or the entry file `init` writes
    own = [a for a in cands if isinstance(a.get("value"), str) and a["value"].startswith("file://")
           and os.path.basename(a["value"][7:].split(":", 1)[0]) in names]
    cands = own or cands
    if not cands:
        return None, False
    kinds = {a.get("type") for a in cands}
    if len(kinds) > 1:
        raise InputProblem("this test has both a python and a not-python trajcheck assertion with "
                           "the same config, so negation cannot be told apart; give them different configs")
    return cands[0], cands[0].get("type") == "not-python"


def _spec(context: Mapping[str, Any]) -> dict[str, Any]:
    """Expectation and options from the assertion ``config`` and the test's ``vars``, read by
    ``trajcheck.adapters._settings`` with the rules of every host: lists (forbidden, optional
    calls, precedence, ...) are joined, any other key set in both with different values is
    an error, lists of names may be comma strings (as promptfoo's own tool assertions take).

    Every config key must be known (an unknown one fails the assertion naming the closest
    known key). Vars are the prompt's too: trajcheck reads ``vars.trajcheck`` (a mapping or
    JSON string) when the test has it, else only the vars only trajcheck uses
    (``expected_calls``, ``forbidden_calls``, ...); vars named ``case``, ``tools``,
    ``metric``, ``match``, ``user`` stay the prompt's. A var one letter from a trajcheck key
    (``expected_call``) fails the assertion rather than being silently ignored."""
    from trajcheck.adapters import _settings
    from trajcheck.errors import DatasetError

    known = CASE_KEYS + OPTION_KEYS + ROW_KEYS

    def decoded(m: Mapping[str, Any], what: str) -> dict[str, Any]:
        return {k: (maybe_json(v, f"{what} {k}") if k in known or k == "trajcheck" else v) for k, v in m.items()}

    vars_ = context.get("vars")
    cfg = context.get("config")
    if cfg is not None and not isinstance(cfg, Mapping):
        raise InputProblem(f"assertion config must be a mapping, got {type(cfg).__name__}")
    try:
        from_vars = (_settings.namespaced(decoded(vars_, "var"), "test vars", comma_lists=True,
                                          extra_keys=OPTION_KEYS)
                     if isinstance(vars_, Mapping) else {})
        from_cfg = _settings.read(decoded(cfg or {}, "config"), "assertion config", comma_lists=True,
                                  extra_keys=OPTION_KEYS)
        spec = _settings.merge([_settings.Layer("the test's vars", from_vars),
                                _settings.Layer("the assertion's config", from_cfg, per_case=False)],
                               _case_id(context, {**from_vars, **from_cfg}))
        _settings.check_flat_run_keys(spec, "promptfoo settings")
        exp = spec.get("expected_calls")
        if isinstance(exp, list):
            names = [c if isinstance(c, str) else c.get("name") for c in exp]
            for where, layer, one in (("test vars", from_vars, True), ("assertion config", from_cfg, False)):
                if layer.get("match"):
                    _settings.check_match(layer["match"], f"{where} match", names, per_case=one)
    except DatasetError as e:
        raise InputProblem(str(e)) from e
    return spec


def _threshold(spec: Mapping[str, Any], entry: Mapping[str, Any] | None, row: Any) -> float:
    t = spec.get("threshold")
    if t is None and entry is not None:
        t = entry.get("threshold")
    if t is None:
        return float(row.threshold)
    t = maybe_json(t, "threshold")
    if isinstance(t, str):
        try:
            t = float(t)
        except ValueError:
            raise InputProblem(f"threshold: expected a number, got {t!r}") from None
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0.0 <= float(t) <= 1.0:
        raise InputProblem(f"threshold: expected a number in [0, 1], got {t!r}")
    return float(t)


def _trajectory(output: Any, context: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[Any, str]:
    """The run to score: the provider's ``metadata.trajectory`` (our provider), else the output.

    ``source``: ``auto`` (default: metadata trajectory when present, else output), ``output``
    or ``metadata``. ``format`` names a reader to force for the output.
    """
    from trajcheck.model import Trajectory

    source = spec.get("source", "auto")
    if source not in ("auto", "output", "metadata"):
        raise InputProblem(f"source: expected auto, output or metadata, got {source!r}")
    meta = context.get("metadata")
    tdict = meta.get("trajectory") if isinstance(meta, Mapping) else None
    if source == "metadata" and tdict is None:
        raise InputProblem("source is 'metadata' but the provider returned no metadata.trajectory")
    if source != "output" and tdict is not None:
        try:
            return Trajectory.from_dict(maybe_json(tdict, "metadata.trajectory")), "metadata.trajectory"
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InputProblem(f"metadata.trajectory is not a serialized trajectory ({e})") from e
    pr = context.get("providerResponse")
    if (source == "auto" and isinstance(meta, Mapping) and isinstance(meta.get("toolCalls"), list)
            and isinstance(pr, Mapping)):
        # another provider's response carrying promptfoo-style metadata.toolCalls
        from trajcheck.errors import TrajcheckError
        from trajcheck.read.traces import promptfoo as pf_reader

        try:
            return pf_reader.read({**pr, "output": output}), "providerResponse (promptfoo reader)"
        except TrajcheckError as e:
            raise InputProblem(f"provider response could not be read: {e}") from e
    if output is None:
        raise InputProblem("the provider returned no output")
    fmt = spec.get("format")
    if fmt is not None and not isinstance(fmt, str):
        raise InputProblem(f"format: expected a reader name, got {fmt!r}")
    traj, how = read_output(output, fmt)
    return traj, f"output ({how})"


def _case_id(context: Mapping[str, Any], spec: Mapping[str, Any]) -> str:
    if spec.get("case_id") is not None:
        return str(spec["case_id"])
    vars_ = context.get("vars")
    if isinstance(vars_, Mapping) and vars_.get("case_id") is not None:
        return str(vars_["case_id"])
    test = context.get("test")
    desc = test.get("description") if isinstance(test, Mapping) else None
    return str(desc) if desc else "promptfoo test"


def _mode_dialect(spec: Mapping[str, Any]) -> tuple[str, str | None]:
    """``mode``/``dialect`` of a trajectory match; a promptfoo name (``tool-sequence``,
    ``tool-used``, ...) without a dialect means promptfoo's."""
    mode = spec.get("mode", "superset")
    dialect = spec.get("dialect")
    if not isinstance(mode, str):
        raise InputProblem(f"mode: expected a mode name, got {mode!r}")
    if dialect is not None and not isinstance(dialect, str):
        raise InputProblem(f"dialect: expected a dialect name, got {dialect!r}")
    if dialect is None and mode not in NEUTRAL_MODES:
        from trajcheck.errors import MetricInputError
        from trajcheck.metrics.trajectory import lookup_mode

        try:  # a promptfoo user's names (tool-sequence, tool-used, ...) mean promptfoo's
            dialect = "promptfoo" if lookup_mode(mode, "promptfoo") is not None else None
        except MetricInputError:
            dialect = None
    return mode, dialect


def _names_only_note(spec: Mapping[str, Any], case: Any, mode: str, dialect: str | None) -> str:
    """"names only" note when a dialect row ignores arguments that expected_calls spell out."""
    from trajcheck.metrics.trajectory import lookup_mode

    row = lookup_mode(mode, dialect)
    if (row is None or row.args_mode != "ignore" or spec.get("args_mode") is not None
            or not any(e.args for e in case.expected_calls)):
        return ""
    return (f"names only: {dialect} {mode} compares tool names, so the arguments in "
            "expected_calls are not checked (set args_mode to check them); ")


def _options(spec: Mapping[str, Any], metric: str) -> Any:
    from trajcheck.adapters import _catalog

    for k in ("weights", "ignore", "id_args", "retry_budget", "args_mode", "match"):
        try:
            _catalog.check_option(k, spec.get(k), "assertion config")
        except Exception as e:  # MetricInputError: shown as the reason
            raise InputProblem(str(e)) from e
    mode, dialect = _mode_dialect(spec) if metric == "trajectory_match" else (None, None)
    return _catalog.Options(mode=mode, dialect=dialect, args_mode=spec.get("args_mode"),
                            weights=spec.get("weights"), before_state=spec.get("before_state"),
                            after_state=spec.get("after_state"), ignore=spec.get("ignore"),
                            id_args=spec.get("id_args"),
                            retry_budget=spec.get("retry_budget") if spec.get("retry_budget") is not None else 2)


NAMED_PARTS = {"tool_call_prf": ("precision", "recall"),
               "composite": ("outcome", "tool_selection", "argument_correctness", "efficiency")}


def _named_scores(res: Any, label: str | None, negated: bool, lower_is_better: bool = False,
                  name: str | None = None) -> dict[str, float]:
    """Sub-scores for promptfoo's ``namedScores``: ``<label>.<part>`` for the metric's parts.

    ``label`` is the assertion's ``metric:`` name (promptfoo already records the assertion's
    score under it), else ``name`` (the metric's, see :func:`_unlabeled_name`), which then
    also gets the value. A rate where lower is better keeps its own value under its own name
    (``duplicate_call_rate``), or under ``<label>.rate`` beside the label promptfoo fills with
    the score (1 - rate), so a rate never averages with higher-is-better figures under one
    name. promptfoo averages a name across the assertions of a test, so a negated assertion
    reports none (its raw parts would mix with un-negated ones).
    """
    if negated:
        return {}
    name = name or res.name
    out: dict[str, float] = {} if label else {name: float(res.score)}
    if label and lower_is_better:
        out[f"{label}.rate"] = float(res.score)
    prefix = label or name
    for k in NAMED_PARTS.get(res.name, ()):
        v = (res.parts or {}).get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[f"{prefix}.{k}"] = float(v)
    return out


def get_assert(output: Any, context: Mapping[str, Any]) -> dict[str, Any]:
    """promptfoo entry point: score one agent output with a trajcheck metric.

    Args:
        output: the provider output after transforms: a dict, a list, or a (JSON) string -- an
            OpenAI assistant message or message list, Anthropic message(s) or ``tool_use``
            blocks, a ``{name, args}`` list, or a serialized trajcheck trajectory. When the
            provider is trajcheck's (``provider.py``), ``context["metadata"]["trajectory"]`` is
            used instead (set ``source: output`` to score the output).
        context: promptfoo's assertion context. The expectation is read from
            ``context["config"]`` (the assertion's ``config:``) and, for keys it lacks, from
            ``context["vars"]`` (lists in vars as JSON strings: promptfoo expands array vars).
            Keys: ``expected_calls``, ``optional_calls``, ``forbidden_calls``, ``precedence``,
            ``forbidden_sequences``, ``response_must_include``, ``max_steps``,
            ``optimal_steps``, ``args_mode`` (exact_keys | expected_keys | ignore), ``user``;
            options ``metric`` (f1 default, trajectory_match, forbidden, composite), ``mode``
            and ``dialect`` (trajectory_match; promptfoo names such as ``tool-sequence`` select
            the promptfoo dialect of ``trajcheck.metrics.trajectory.MODE_TABLE``, neutral names
            exact/in_order/unordered/superset/subset), ``threshold``, ``source``, ``format``,
            ``case_id``.

    Returns:
        ``{"pass", "score", "reason", "componentResults", "namedScores"}`` -- always with a
        reason (promptfoo rejects results without one). ``score`` in [0, 1] is the core
        metric's score (F1, 1/0 match, 1/0 no critical forbidden call, composite). pass =
        score >= threshold (and the metric's own verdict where it has one). Default
        thresholds: f1 1.0 (as promptfoo's tool-call-f1), trajectory_match 1.0, forbidden 1.0,
        composite 0.80 (DESIGN.md); the assertion's own ``threshold:`` is used when the config
        has none. A rate where lower is better (``duplicate_call_rate``, ``false_success``, ...)
        passes at value <= threshold and scores ``1 - value``, since promptfoo averages scores
        into the test's score as higher-is-better; its raw value goes to ``namedScores``
        (under its own name, or ``<label>.rate``).

    Not applicable (the core's score is None: error recovery on a run with no failed call,
    ...): promptfoo has no skipped state, so the assertion passes, negated or not, with score 1,
    the reason saying so and ``metadata.trajcheck.not_applicable``; the test scoring function
    ``trajcheck.promptfoo.scoring.score_test`` (``assertScoringFunction``) leaves it out of the
    test's score and named scores.

    Negation (DESIGN.md policy "Negated assertions ... flip pass and report score = 1 - value"):
        for ``not-python`` (found by ``find_own_assertion``), the score returned is
        1 - value and ``pass`` is returned un-flipped, because promptfoo flips it after the
        call (and replaces our reason with its own when it does; the full reason stays in
        ``componentResults``). Put the threshold of a negated assertion in ``config``:
        promptfoo applies an assertion-level ``threshold`` to the returned score before flipping.

    Errors: bad input (unreadable output, malformed expectation, a missing reference,
    trajcheck not importable) gives pass=false (after any negation),
    score 0 and a reason naming the field -- for ``python`` and ``not-python`` alike, as
    promptfoo itself treats a Python assertion that cannot run (its ``handlePython`` turns a
    raised error into pass false, score 0, whatever the ``not-``; promptfoo has no skipped
    state for an assertion). When the assertion cannot tell whether it was negated (it is not
    among the test's ``assert`` entries, or a ``python`` and a ``not-python`` one share its
    config) a returned failure could be flipped into a pass, so it raises
    :class:`AssertionNotScored` instead and promptfoo records that failure itself.
    """
    try:
        return _get_assert(output, context)
    except AssertionNotScored:
        raise
    except Exception as e:  # whatever the output or config holds, promptfoo gets a result
        why = f"could not score this output ({type(e).__name__}: {e})"
        try:
            entry, negated = find_own_assertion(context) if isinstance(context, Mapping) else (None, False)
        except Exception:
            entry, negated = None, False
        if entry is None and _under_promptfoo(context):
            raise AssertionNotScored(f"trajcheck: {why}") from e
        return _fail(why, negated=negated)


def _under_promptfoo(context: Any) -> bool:
    """True when ``context`` carries a test with assertions, as promptfoo's does: there, not
    finding this assertion among them means its negation is unknown. A direct call without
    a test (library use, tests) has nothing to negate the result."""
    return isinstance(context, Mapping) and bool(_assertion_entries(context.get("test")))


class AssertionNotScored(RuntimeError):
    """The assertion failed (missing reference, bad input) and cannot
    tell whether promptfoo will negate its result; raised so that promptfoo records the
    failure itself (pass false, score 0 for ``python`` and ``not-python`` alike). Not a
    ``TrajcheckError`` subclass so that it also works when trajcheck cannot be imported."""


def _get_assert(output: Any, context: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(context, Mapping):
        return _fail(f"context must be a mapping, got {type(context).__name__}")
    negated = False
    try:
        entry, negated = find_own_assertion(context)
    except InputProblem as e:  # python and not-python with one config: negation unknown
        raise AssertionNotScored(f"trajcheck: {e}") from e
    try:
        try:
            import trajcheck  # noqa: F401
        except ImportError as e:
            raise InputProblem(f"the Python running this assertion ({sys.executable}) cannot import trajcheck; "
                               "install it there (pip install trajcheck) or set PROMPTFOO_PYTHON to the "
                               "python of the virtual environment that has it") from e
        from trajcheck.adapters import _catalog
        from trajcheck.errors import TrajcheckError

        spec = _spec(context)
        if spec.get("cases") is not None:
            spec = _with_case_file(spec, context)
        metric_name = spec.get("metric", "tool_call_f1")
        try:
            row = _catalog.row_metric(METRIC_ALIASES.get(metric_name, metric_name)
                                      if isinstance(metric_name, str) else metric_name, "metric")
        except TrajcheckError as e:
            raise InputProblem(str(e)) from e
        threshold = _threshold(spec, entry, row)
        # the config is checked before the output is read: a bad setting (a list of names
        # given a number, say) fails every output, named, whatever the agent returned
        build_case(spec, case_id=_case_id(context, spec), case_input="")
        _options(spec, row.key)
        traj, source = _trajectory(output, context, spec)
        if spec.get("error_pattern") is not None:
            traj = _with_error_pattern(traj, spec["error_pattern"])
        case_input = traj.user_input if traj.user_input is not None else context.get("prompt")
        case = build_case(spec, case_id=_case_id(context, spec), case_input=case_input)
        if isinstance(spec.get("match"), Mapping):
            from dataclasses import replace

            from trajcheck.adapters._case import apply_match

            case = replace(case, expected_calls=apply_match(case.expected_calls, spec["match"]))
        opts = _options(spec, row.key)
        provided = {k for k in CASE_KEYS if spec.get(k) is not None}
        try:
            res = _catalog.compute(row.key, traj, case, opts, provided,
                                   "give it in the assertion's config (or the test's vars)")
        except TrajcheckError as e:
            raise InputProblem(f"{type(e).__name__}: {e}") from e
        if res.score is None:
            return _not_applicable(res, entry, negated, source, _failure_visibility_note(traj, spec))
        if not math.isfinite(float(res.score)):
            raise InputProblem(f"{res.name} gave no finite score here: {res.reason}")
        raw_pass = bool(_catalog.passed(row, res, threshold))
        note = _names_only_note(spec, case, opts.mode, opts.dialect) if row.key == "trajectory_match" else ""
    except InputProblem as e:
        if entry is None and _under_promptfoo(context):  # not among the test's assertions
            raise AssertionNotScored(f"trajcheck: {e}") from e
        return _fail(str(e), negated=negated)
    value = float(res.score)
    # promptfoo averages assertion scores into the test's score and compares them with
    # thresholds as higher-is-better: a rate where 0 is best is given as 1 - rate
    good = 1.0 - value if row.lower_is_better else value
    score = 1.0 - good if negated else good
    verdict = "passes" if raw_pass else "fails"
    cmp = "<=" if row.lower_is_better else ">="
    label_name = _catalog.display_name(row.key, opts.mode, opts.dialect).replace(" (trajcheck)", "")
    as_score = (f"; lower is better, promptfoo score 1 - {value:.4g} = {good:.4g}"
                if row.lower_is_better else "")
    reason = (f"trajcheck {label_name} = {value:.4g} (pass at {cmp} {threshold:g}, {verdict}{as_score}"
              f"{'; negated: not-python scores 1 - score = ' + format(score, '.4g') if negated else ''}): "
              f"{note}{res.reason} [read from {source}]")
    problems = traj.metadata.get("problems") if isinstance(traj.metadata, Mapping) else None
    if problems:
        reason += f" [{len(problems)} trace problem(s): {problems[0]}]"
    reason += _failure_visibility_note(traj, spec)
    label = entry.get("metric") if entry is not None and isinstance(entry.get("metric"), str) else None
    # promptfoo replaces the reason of a negated assertion with its own ("Assertion passed"):
    # keep ours in a component result, which promptfoo shows but does not score (notes §1.4).
    components = ([{"pass": raw_pass != negated, "score": score, "reason": reason}] if negated else [])
    return {"pass": raw_pass, "score": score, "reason": reason,
            "componentResults": components,
            "namedScores": _named_scores(res, label, negated, row.lower_is_better,
                                         _unlabeled_name(row.key, opts.mode, opts.dialect, res.name))}


def _failure_visibility_note(traj: Any, spec: Mapping[str, Any]) -> str:
    """What the output cannot show about failed calls, so a pass is never read as more than
    it is: an output with calls and no tool results at all (an assistant message from the
    team's own provider) cannot show a failed call; results from a source without an error
    flag that look like errors get the ``error_pattern`` that would mark them."""
    n_calls = len(traj.tool_calls())
    if n_calls and not traj.tool_results():
        return (f" [the output holds {n_calls} tool call(s) and no tool results, so a failed call "
                "cannot be seen: return the whole message list (or a trace) from the provider, "
                "or use trajcheck's provider]")
    if spec.get("error_pattern") is not None:
        return ""
    from trajcheck.hints import error_pattern_hint

    hint = error_pattern_hint([traj], option="error_pattern:")
    return f" [{hint}]" if hint else ""


def _unlabeled_name(key: str, mode: str | None, dialect: str | None, name: str) -> str:
    """The named score of an assertion without a ``metric:`` label: the metric's key as the
    config names it (``task_success``, ``tool_call_f1``; not the core function's result name,
    which differs between metrics sharing a function and between cases: ``tool_call_prf``
    held both precision and F1, ``outcome_from_calls`` hid ``task_success`` from the summary
    hook), and for a trajectory match its mode and dialect too (``trajectory_in_order``,
    ``trajectory_exact_agentevals_strict``), so two modes never average under one name."""
    if key != "trajectory_match":
        return key
    from trajcheck.adapters import _catalog

    return _catalog.default_key(key, mode, dialect).removeprefix("trajcheck_")


def _not_applicable(res: Any, entry: Mapping[str, Any] | None, negated: bool, source: str,
                    note: str = "") -> dict[str, Any]:
    """The result of a figure that does not apply to this run (the core's score None: error
    recovery on a run with no failed call, ordering with no applicable rule, ...): a pass with
    the reason (promptfoo has no skipped state; a passing assertion is its neutral, as for an
    assertion of weight 0), score 1.0 and ``metadata.trajcheck.not_applicable`` so that
    trajcheck's test scoring function (``scoring.py``, ``assertScoringFunction``) leaves it
    out of the test's score and named scores. For ``not-python`` the pass is returned
    un-flipped (promptfoo flips it), so the assertion passes either way."""
    reason = (f"trajcheck {res.name}: not applicable, not counted ({res.reason}) [read from {source}]{note}")
    components = [{"pass": True, "score": 1.0, "reason": reason,
                   "metadata": {"trajcheck": {"not_applicable": True}}}] if negated else []
    return {"pass": not negated, "score": 1.0, "reason": reason, "componentResults": components,
            "namedScores": {}, "metadata": {"trajcheck": {"not_applicable": True, "metric": res.name}}}


def _with_case_file(spec: Mapping[str, Any], context: Mapping[str, Any]) -> dict[str, Any]:
    """``spec`` completed from the dataset row whose ``id`` is the test's case id
    (``case_id`` in the config or vars, else the test's description) in the ``cases`` file
    (JSONL/JSON/YAML, ``trajcheck.load_cases``; a relative path is taken from the folder
    promptfoo runs in). Lists (``forbidden_calls``, ``optional_calls``, ... the settings
    parser's ``UNION_KEYS``) are joined with the row's, as config and vars are joined (a
    ``defaultTest`` forbidding ``drop_db`` must not lift the row's own forbidden calls); any
    other key in the config or vars wins over the row's."""
    path = spec["cases"]
    if not isinstance(path, str):
        raise InputProblem(f"cases: expected a file path, got {path!r}")
    from trajcheck import load_cases
    from trajcheck.errors import TrajcheckError

    cid = _case_id(context, spec)
    try:
        rows = {c.id: c for c in load_cases(path)}
    except (TrajcheckError, OSError) as e:
        raise InputProblem(f"cases: {path}: {e}") from e
    if cid not in rows:
        from trajcheck.model import did_you_mean

        raise InputProblem(f"cases: {path} has no case {cid!r}{did_you_mean(cid, rows)}")
    row = rows[cid].to_dict()
    out = {k: row[k] for k in CASE_KEYS if k in row}
    # a dataset row states its expected calls even when there are none (the no-tool case)
    out["expected_calls"] = row.get("expected_calls", [])
    from trajcheck.adapters._settings import UNION_KEYS, Layer, merge

    joined = merge([Layer(f"cases row {cid!r}", {k: out[k] for k in UNION_KEYS if k in out}),
                    Layer("the config and vars", {k: spec[k] for k in UNION_KEYS if spec.get(k) is not None})],
                   cid)
    out.update({k: v for k, v in spec.items() if v is not None})
    out.update(joined)
    return out


def _with_error_pattern(traj: Any, pattern: Any) -> Any:
    """``traces.apply_error_pattern``: results whose text matches are failed calls."""
    if not isinstance(pattern, str):
        raise InputProblem(f"error_pattern: expected a regular expression string, got {pattern!r}")
    from trajcheck.errors import TrajcheckError
    from trajcheck.read.traces import apply_error_pattern

    try:
        return apply_error_pattern(traj, pattern)
    except TrajcheckError as e:
        raise InputProblem(f"error_pattern: {e}") from e
