"""Simulated users: a model plays a user with a goal and hidden facts against the agent under test.

A :class:`Scenario` (persona, goal, hidden facts, rules, success criteria, max turns, and the
case fields of its sandbox: ``initial_state``, ``expected_final_state``...) is loaded from
JSON or YAML with :func:`load_scenarios`. :func:`simulate` alternates a simulated-user model
(any judge model, see ``trajcheck.judges``) and the agent, in a fresh sandbox per seed:

1. the user speaks first (the scenario's ``opening``, else the user model's first message);
2. the agent answers: it is called as in ``trajcheck run`` (``agent(message, tools)``, sync
   or async, ``tools`` its side of the registry on this run's sandbox, in a worker process
   unless ``isolation="inline"``; an agent that declares a ``history`` parameter also
   receives the earlier turns as ``[{"role", "content"}]``); it returns its reply like a
   final response (str, None, ``AgentRun`` or dict);
3. the user model reads the conversation and answers, until it writes :data:`STOP_MARKER`
   (goal met), :data:`GIVE_UP_MARKER` (gives up), or ``max_turns`` user messages were sent.

Each seed gives one ``Trajectory`` (user messages, tool calls and results, agent replies as
assistant steps, the last reply as ``final_response``) whose metadata carries ``case_id``,
``trial`` (the seed), ``run_id``, ``state_before``/``state_after`` (so the suite's
final-state checks apply), ``termination`` (goal_met, gave_up, max_turns or agent_error) and
``terminated`` False when the conversation was cut off (max turns or an agent error), as the
suite's outcome policy expects. :meth:`Scenario.to_case` gives the matching ``Case`` (success
criteria in ``metadata["success_criteria"]`` for ``judge_task_completion``).

:func:`unprompted_reveals` flags hidden facts the simulated user gave away before the agent
asked for them (literal text, or paraphrases with a semantic scorer). Each run's seed is
also sent to the user model's API where the adapter takes one (:func:`simulate_one`).

Source: seed 000 §7.1 (simulated users: persona, hidden facts revealed only when asked, goal,
several random seeds per scenario, final-state check and transcript judges after each
conversation).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import AgentError, DatasetError, JudgeError, TrajcheckError
from ..match.matchers import normalize_text
from ..metrics.result import MetricResult
from ..model import Case, Step, Trajectory

STOP_MARKER = "###STOP###"
"""The simulated user writes this when its goal is met."""
GIVE_UP_MARKER = "###GIVE_UP###"
"""The simulated user writes this when it gives up."""

_CASE_KEYS = ("user", "initial_state", "expected_calls", "optional_calls", "forbidden_calls",
              "precedence", "expected_final_state", "response_must_include", "max_steps",
              "optimal_steps", "forbidden_sequences", "faults", "tools", "args_mode", "threshold")


@dataclass(frozen=True)
class HiddenFact:
    """A fact the user knows but gives only when asked: ``name``, ``value`` (the text whose
    appearance in a user message counts as revealing it) and ``keywords`` (phrases whose
    appearance in an agent message counts as asking for it; default: the name with ``_``
    read as a space)."""

    name: str
    value: str
    keywords: tuple[str, ...] = ()

    @property
    def ask_phrases(self) -> tuple[str, ...]:
        """The keywords, or the default derived from the name."""
        return self.keywords or (self.name.replace("_", " "),)


@dataclass(frozen=True)
class Scenario:
    """One simulated-user scenario.

    ``id``; ``goal`` (what the user wants, told to the user model); ``persona`` (how it
    speaks); ``hidden_facts``; ``rules`` (extra instructions to the user model);
    ``success_criteria`` (for the task-completion judge); ``max_turns`` (user messages, >= 1);
    ``opening`` (the first user message, else the user model writes it); ``case`` (dataset-row
    fields for the sandbox and checks: ``initial_state``, ``expected_final_state``, ...).
    """

    id: str
    goal: str
    persona: str = ""
    hidden_facts: tuple[HiddenFact, ...] = ()
    rules: tuple[str, ...] = ()
    success_criteria: tuple[str, ...] = ()
    max_turns: int = 10
    opening: str | None = None
    case: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, where: str = "scenario") -> Scenario:
        """Build from a JSON/YAML object. ``hidden_facts`` is a mapping name -> value or a list
        of ``{"name", "value", "keywords"?}``; case fields may sit at the top level or under
        ``case``. Seed 000 §7.1's shape loads as written: ``success`` is the success criteria
        (giving both names with different lists is an error), and a scenario without ``id``
        gets ``s-`` + the first 10 hex digits of SHA-256(goal). Raises DatasetError naming
        ``where`` and the field."""
        if not isinstance(d, Mapping):
            raise DatasetError(f"{where}: a scenario must be an object, got {type(d).__name__}")
        sid = d.get("id")
        where = f"{where} {sid!r}" if sid is not None else where
        if not isinstance(d.get("goal"), str) or not d["goal"].strip():
            raise DatasetError(f"{where}: field 'goal' must be a non-empty string")
        if "success" in d:  # seed 000 §7.1 names the criteria "success"
            if "success_criteria" in d and d["success_criteria"] != d["success"]:
                raise DatasetError(f"{where}: give 'success' or 'success_criteria', not both")
            d = {**d, "success_criteria": d["success"]}
        if sid is None:  # the seed's scenarios carry no id: a stable one from the goal
            import hashlib

            d = {**d, "id": "s-" + hashlib.sha256(d["goal"].encode("utf-8")).hexdigest()[:10]}
        if not isinstance(d.get("id"), str) or not d["id"].strip():
            raise DatasetError(f"{where}: field 'id' must be a non-empty string")
        mt = d.get("max_turns", 10)
        if isinstance(mt, bool) or not isinstance(mt, int) or mt < 1:
            raise DatasetError(f"{where}: field 'max_turns' must be an integer >= 1, got {mt!r}")
        facts: list[HiddenFact] = []
        hf = d.get("hidden_facts") or {}
        if isinstance(hf, Mapping):
            hf = [{"name": k, "value": v} for k, v in hf.items()]
        if not isinstance(hf, list):
            raise DatasetError(f"{where}: 'hidden_facts' must be an object or a list")
        for i, f in enumerate(hf):
            if not isinstance(f, Mapping) or not isinstance(f.get("name"), str) or "value" not in f:
                raise DatasetError(f"{where}: hidden_facts[{i}] needs 'name' and 'value'")
            kws = f.get("keywords") or ()
            if isinstance(kws, str) or not all(isinstance(k, str) for k in kws):
                raise DatasetError(f"{where}: hidden_facts[{i}].keywords must be a list of strings")
            facts.append(HiddenFact(f["name"], str(f["value"]), tuple(kws)))
        for k in ("rules", "success_criteria"):
            v = d.get(k) or ()
            if isinstance(v, str) or not all(isinstance(x, str) for x in v):
                raise DatasetError(f"{where}: field {k!r} must be a list of strings")
        opening = d.get("opening")
        if opening is not None and not isinstance(opening, str):
            raise DatasetError(f"{where}: field 'opening' must be a string")
        case = dict(d.get("case") or {})
        case.update({k: d[k] for k in _CASE_KEYS if k in d})
        return cls(id=d["id"], goal=d["goal"], persona=str(d.get("persona") or ""),
                   hidden_facts=tuple(facts), rules=tuple(d.get("rules") or ()),
                   success_criteria=tuple(d.get("success_criteria") or ()), max_turns=mt,
                   opening=opening, case=case)

    def to_case(self) -> Case:
        """The ``Case`` this scenario is scored as: id, input = the opening (else the goal),
        the case fields, and ``metadata`` with ``success_criteria`` and ``scenario`` = id."""
        d: dict[str, Any] = {"id": self.id, "input": self.opening or self.goal, **self.case}
        meta = dict(d.get("metadata") or {})
        if self.success_criteria:
            meta.setdefault("success_criteria", list(self.success_criteria))
        meta["scenario"] = self.id
        d["metadata"] = meta
        return Case.from_dict(d)


def load_scenarios(path: str | Path) -> list[Scenario]:
    """Scenarios from a JSON or YAML file (``.yaml``/``.yml``): one scenario object, a list,
    or ``{"scenarios": [...]}``; JSON Lines (``.jsonl``) holds one per line. Raises
    DatasetError naming the file (and line or index) on unreadable input or a bad scenario."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise DatasetError(f"{p}: cannot read scenarios ({e})") from e
    items: list[tuple[str, Any]] = []
    try:
        if p.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        elif p.suffix == ".jsonl":
            data = None
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    items.append((f"{p}:{n}", json.loads(line)))
        else:
            data = json.loads(text)
    except Exception as e:  # json / yaml parse errors
        raise DatasetError(f"{p}: not valid {p.suffix.lstrip('.') or 'JSON'}: {e}") from e
    if p.suffix != ".jsonl":
        if isinstance(data, Mapping) and "scenarios" in data:
            data = data["scenarios"]
        if isinstance(data, Mapping):
            data = [data]
        if not isinstance(data, list):
            raise DatasetError(f"{p}: expected a scenario, a list of scenarios or {{'scenarios': [...]}}")
        items = [(f"{p}[{i}]", x) for i, x in enumerate(data)]
    out = [Scenario.from_dict(x, where=w) for w, x in items]
    seen: set[str] = set()
    for s in out:
        if s.id in seen:
            raise DatasetError(f"{p}: scenario id {s.id!r} appears twice")
        seen.add(s.id)
    return out


# --------------------------------------------------------------------------- the simulated user


def user_system_prompt(scenario: Scenario, seed: int = 0) -> str:
    """The simulated user's instructions (persona, goal, hidden facts, rules, markers)."""
    facts = "\n".join(f"- {f.name}: {f.value}" for f in scenario.hidden_facts) or "- (none)"
    rules = "\n".join(f"- {r}" for r in scenario.rules)
    return (
        "You are playing a user talking to a customer-support AI agent. Stay in character; "
        "write only the user's next message.\n"
        + (f"Persona: {scenario.persona}\n" if scenario.persona else "")
        + f"Your goal: {scenario.goal}\n"
        f"Facts you know but give ONLY when the agent asks for them:\n{facts}\n"
        + (f"Rules:\n{rules}\n" if rules else "")
        + f"When your goal has been fully met, reply with {STOP_MARKER}. If the agent cannot "
        f"help you and further messages would not change that, reply with {GIVE_UP_MARKER}.\n"
        f"Variation seed: {seed}"
    )


def user_messages(scenario: Scenario, conversation: Sequence[Mapping[str, str]],
                  seed: int = 0) -> list[dict[str, str]]:
    """The messages sent to the user model: the system prompt, then the conversation with
    roles flipped (the agent's replies are ``user`` turns, the user's own are ``assistant``);
    a conversation that has not started gets a request for the opening message."""
    msgs = [{"role": "system", "content": user_system_prompt(scenario, seed)}]
    if not conversation:
        msgs.append({"role": "user", "content": "(The agent is waiting. Write your first message.)"})
    for m in conversation:
        msgs.append({"role": "assistant" if m["role"] == "user" else "user", "content": m["content"]})
    return msgs


# How a termination reason is shown: it is the simulated user's (or the loop's) view of the
# conversation, not trajcheck's task outcome ("goal_met" means the user model said so).
TERMINATION_LABELS = {"goal_met": "user said goal met", "gave_up": "user gave up",
                      "max_turns": "hit max turns", "agent_error": "agent error",
                      "user_error": "user model error"}


def termination_label(reason: str) -> str:
    """The display label of a termination reason (``TERMINATION_LABELS``; unknown -> itself)."""
    return TERMINATION_LABELS.get(reason, reason)


def _split_marker(text: str) -> tuple[str, str | None]:
    for marker, why in ((STOP_MARKER, "goal_met"), (GIVE_UP_MARKER, "gave_up")):
        if marker in text:
            return text.replace(marker, "").strip(), why
    return text.strip(), None


# --------------------------------------------------------------------------- the runner


@dataclass(frozen=True)
class SimulationResult:
    """One simulated conversation: ``scenario_id``, ``seed``, the ``trajectory``, the
    ``conversation`` as ``[{"role": "user"|"assistant", "content"}]``, ``termination``
    (goal_met, gave_up, max_turns, agent_error) and ``error`` (agent or user-model error)."""

    scenario_id: str
    seed: int
    trajectory: Trajectory
    conversation: tuple[dict[str, str], ...]
    termination: str
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"scenario_id": self.scenario_id, "seed": self.seed, "termination": self.termination,
                "error": self.error, "conversation": list(self.conversation),
                "trajectory": self.trajectory.to_dict()}


def _wants_history(agent: Any) -> bool:
    try:
        return "history" in inspect.signature(agent).parameters
    except (TypeError, ValueError):
        return False


def _call_agent(agent: Any, text: str, bound: Any, history: list[dict[str, str]]) -> Any:
    ret = agent(text, bound, history=list(history)) if _wants_history(agent) else agent(text, bound)
    if inspect.isawaitable(ret):
        ret = asyncio.run(_await(ret))
    return ret


def _turn_inline(agent: Any, text: str, tools: Any, history: list[dict[str, str]]) -> tuple[str | None, str | None]:
    """``(reply, error)`` of one agent turn in this process."""
    from .agent_return import parse_agent_return

    try:
        reply, _, _, _, _, err = parse_agent_return(_call_agent(agent, text, tools, history))
    except KeyboardInterrupt:
        raise
    except SystemExit as e:  # the agent's sys.exit ends its conversation, not the program
        return None, f"agent tried to exit the process (SystemExit: {e.code!r})"
    except Exception as e:
        return None, f"{type(e).__name__}: {e}".rstrip(": ")
    return reply, err


async def _await(x: Any) -> Any:
    return await x


def simulate_one(scenario: Scenario, agent: Callable[..., Any], user_model: Any, *, seed: int = 0,
                 tools: Any = None, sandbox_url: str | None = None,
                 base_dir: str | Path | None = None,
                 fixture_roots: Sequence[str | Path] = (), isolation: str = "sandbox",
                 _pool: Any = None) -> SimulationResult:
    """Run one conversation (see the module doc) and return its :class:`SimulationResult`.

    ``agent``: the agent under test (``trajcheck run``'s contract); ``user_model``: a judge
    model (``ScriptedModel`` in tests); ``tools``: a ``ToolRegistry`` (else the agent's
    ``tools``/``TOOLS``, as ``trajcheck.run.agent_loading.resolve_tools``); ``sandbox_url``/``base_dir``
    as ``trajcheck.run.sandbox.open_sandbox``; ``fixture_roots``: folders besides ``base_dir``
    that the scenario's ``initial_state`` may come from (any other path is refused with a
    SecurityError, README "Security model"); ``isolation``: ``"process"`` runs each agent
    turn in a worker process, out of the grader's reach (``trajcheck.run.worker_pool``; the agent
    must be loadable by name), ``"inline"`` in this process (debugging; closures and
    lambdas). An agent that raises (or, in a worker, exits or breaks the protocol) ends the
    conversation with
    termination ``agent_error``; a user model that fails (JudgeError) ends it likewise with
    ``user_error``. Setup failures (missing fixture, bad tools) raise their TrajcheckError.

    ``seed`` reaches the user model twice: as the system prompt's ``Variation seed`` line,
    and as the API's sampling seed where the adapter takes one
    (:func:`trajcheck.judges.seeded_model`: OpenAI-compatible endpoints, ``ChatOpenAI``,
    DeepEval's OpenAI models; not Anthropic, whose API has none). The trajectory's
    ``metadata["user_model_seed"]`` is the seed sent to the API, or None when none was.
    Seed 000 §7.1 asks for several seeds per scenario; a seed only in the prompt barely
    changes a model at temperature 0.
    """
    from ..judges import seeded_model
    from .agent_loading import resolve_tools
    from .agent_return import parse_agent_return
    from .sandbox import open_sandbox
    from .tools import AgentTools
    from .worker_pool import pool_for, run_in_worker

    case = scenario.to_case()
    registry = resolve_tools(agent, tools)
    # The run's seed goes to the model's API where it takes one, so a run is reproducible
    # and seeds differ by more than the prompt's seed line (at temperature 0 that is all).
    umodel, seed_sent = seeded_model(user_model, seed)
    pool = _pool if _pool is not None else pool_for(agent, isolation)
    defs = {f: registry.definitions(f) for f in ("openai", "anthropic", "plain")}
    sb = open_sandbox(case.initial_state, url=sandbox_url, base_dir=base_dir, fixture_roots=fixture_roots)
    sb.open()
    try:
        before = sb.snapshot()
        bound = registry.bind(sb, case=case, trial=seed)
        agent_tools = AgentTools(bound)  # the agent's side only: no case, no record
        seen = len(bound.steps)  # the bound tools' own first user step is replaced by ours
        steps: list[Step] = []
        conv: list[dict[str, str]] = []
        termination = "max_turns"
        error: str | None = None
        last_reply: str | None = None

        def add(kind: str, content: str) -> None:
            steps.append(Step(index=len(steps), kind=kind, content=content))

        for turn in range(scenario.max_turns):
            if turn == 0 and scenario.opening is not None:
                utext, why = _split_marker(scenario.opening)
            else:
                try:
                    utext, why = _split_marker(umodel.complete(user_messages(scenario, conv, seed)))
                except JudgeError as e:
                    termination, error = "user_error", f"user model: {e}"
                    break
            if utext:
                conv.append({"role": "user", "content": utext})
                add("user", utext)
            if why is not None:
                termination = why
                break
            if pool is not None:  # the turn in a worker; its calls are recorded by ``bound``
                kind, payload = run_in_worker(pool, bound, {
                    "input": utext, "history": conv[:-1], "user": case.user, "case_id": case.id,
                    "trial": seed, "definitions": defs}, deadline=lambda: None)
                reply, _, _, _, _, err = parse_agent_return(payload) if kind == "ok" else (
                    None, None, None, None, {}, payload)
            else:
                reply, err = _turn_inline(agent, utext, agent_tools, conv[:-1])
            new = bound.steps[seen:]
            seen += len(new)
            for s in new:
                steps.append(dataclasses.replace(s, index=len(steps)))
            if err is not None:
                termination, error = "agent_error", err
                break
            if reply is not None:
                last_reply = reply
                conv.append({"role": "assistant", "content": reply})
                add("assistant", reply)
        after = sb.snapshot()
    finally:
        sb.close()
        if pool is not None and _pool is None:
            pool.close()
    if last_reply is not None:
        steps.append(Step(index=len(steps), kind="final_response", content=last_reply))
    meta: dict[str, Any] = {"case_id": case.id, "trial": seed, "run_id": f"{case.id}-{seed}",
                            "scenario": scenario.id, "seed": seed,
                            "user_model_seed": seed if seed_sent else None,
                            "termination": termination,
                            "user_turns": sum(m["role"] == "user" for m in conv),
                            "state_before": before, "state_after": after}
    if termination in ("max_turns", "agent_error", "user_error"):
        meta["terminated"] = False
    if error is not None:
        meta["error"] = error
    if case.faults:
        meta["faults"] = [dict(f) for f in case.faults]
    traj = Trajectory(steps=tuple(steps), final_response=last_reply, source_format="trajcheck",
                      metadata=meta)
    return SimulationResult(scenario.id, seed, traj, tuple(conv), termination, error)


def simulate(scenario: Scenario, agent: Callable[..., Any], user_model: Any, *,
             seeds: Sequence[int] = (0, 1, 2), tools: Any = None, sandbox_url: str | None = None,
             base_dir: str | Path | None = None,
             fixture_roots: Sequence[str | Path] = (), isolation: str = "sandbox",
             _pool: Any = None) -> list[SimulationResult]:
    """:func:`simulate_one` for each seed in ``seeds`` (each in its own fresh sandbox; with
    ``isolation="process"`` the agent's workers are reused from seed to seed).
    ``[(r.trajectory, scenario.to_case()) for r in results]`` feeds ``suite.score_runs``.
    Raises TrajcheckError (AgentError) for an empty or non-integer seed list."""
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise AgentError(f"simulate: seeds must be a non-empty list of integers, got {seeds!r}")
    from .worker_pool import pool_for

    pool = _pool if _pool is not None else pool_for(agent, isolation)
    try:
        return [simulate_one(scenario, agent, user_model, seed=s, tools=tools, sandbox_url=sandbox_url,
                             base_dir=base_dir, fixture_roots=fixture_roots, isolation=isolation,
                             _pool=pool) for s in seeds]
    finally:
        if pool is not None and _pool is None:
            pool.close()


# --------------------------------------------------------------------------- the CLI's pieces


def load_user_model(spec: str, *, api_key_env: str = "OPENAI_API_KEY", timeout: float = 60.0) -> Any:
    """The simulated user's model from a command-line ``spec`` (``trajcheck run --user-model``).

    - ``openai:MODEL@BASE_URL``: an :class:`~trajcheck.judges.OpenAICompatibleModel` on the
      chat completions endpoint under ``BASE_URL`` (e.g. ``http://localhost:8000/v1``;
      without ``@BASE_URL``: ``https://api.openai.com/v1``), its key read from the
      environment variable ``api_key_env`` (unset or empty: no key is sent), ``timeout``
      seconds per request.
    - ``module:attr`` or ``path/to/file.py:attr`` (loaded as ``trajcheck run --agent``): a
      class or a function taking no arguments is a factory, called once, whose result (a
      judge model, LangChain chat model, DeepEval model or ``fn(messages) -> str``) is
      adapted with :func:`trajcheck.judges.as_model`; any other callable is the model
      itself, ``fn(messages) -> str``.

    Raises JudgeError naming the spec when it cannot be loaded or gives no usable model.
    """
    from ..judges import OpenAICompatibleModel, as_model
    from .agent_loading import load_agent

    if not isinstance(spec, str) or not spec.strip():
        raise JudgeError(f"user model: expected openai:MODEL@BASE_URL or module:callable, got {spec!r}")
    if spec.startswith("openai:"):
        model, sep, base = spec[len("openai:"):].partition("@")
        if not model:
            raise JudgeError(f"user model {spec!r}: no model name (expected openai:MODEL@BASE_URL)")
        key = os.environ.get(api_key_env) or None
        return OpenAICompatibleModel(base_url=base if sep else "https://api.openai.com/v1",
                                     model=model, api_key=key, timeout=timeout)
    try:
        obj = load_agent(spec)
    except AgentError as e:
        raise JudgeError(f"user model: {e}") from e
    if not (hasattr(obj, "complete") or hasattr(obj, "invoke") or hasattr(obj, "generate")):
        factory = inspect.isclass(obj)
        if not factory:
            try:
                inspect.signature(obj).bind()
                factory = True
            except TypeError:
                factory = False
            except ValueError:  # no signature (a builtin): treat as the model itself
                factory = False
        if factory:
            try:
                obj = obj()
            except Exception as e:
                raise JudgeError(f"user model {spec!r}: calling the factory raised "
                                 f"{type(e).__name__}: {e}") from e
    try:
        return as_model(obj)
    except JudgeError as e:
        raise JudgeError(f"user model {spec!r}: {e}") from e


@dataclass(frozen=True)
class ScenarioRun:
    """What :func:`run_scenarios` returns: the ``scorecard`` (a ``suite.Scorecard``), every
    :class:`SimulationResult` in scenario then seed order, and ``summary``: per scenario id,
    ``{"runs", "termination": {reason: count}, "unprompted_reveals": [{"seed", "fact",
    "turn"}]}`` (also stored in the scorecard's ``meta["scenarios"]``)."""

    scorecard: Any
    results: tuple[SimulationResult, ...]
    summary: dict[str, dict[str, Any]]


def run_scenarios(scenarios: Sequence[Scenario], agent: Callable[..., Any], user_model: Any, *,
                  seeds: Sequence[int] = (0,), tools: Any = None, sandbox_url: str | None = None,
                  base_dir: str | Path | None = None, context: Any = None,
                  ks: Sequence[int] | None = None, seed: int = 0, agent_name: str | None = None,
                  out: str | Path | None = None,
                  fixture_roots: Sequence[str | Path] = (), isolation: str = "sandbox") -> ScenarioRun:
    """Simulate every scenario for every seed (:func:`simulate`) and score the conversations
    as ``trajcheck run`` scores its runs (``runner.score_recorded``: final state from the
    sandbox snapshots, calls, sequences; a conversation cut off at max turns or by an agent
    or user-model error is a failed run). ``context``: the ``MatchContext`` for matchers
    (e.g. ``semantic_context()``; its ``semantic_scorer``, when set, also finds paraphrased
    leaks of hidden facts, :func:`unprompted_reveals`); ``ks``/``seed``: pass^k's k and the
    bootstrap seed;
    ``out``: a JSONL file the trajectories are written to (overwritten; ``trajcheck eval``
    reads it back); ``fixture_roots``, ``isolation``: as :func:`simulate_one` (one set of
    workers for every conversation). Raises TrajcheckError (AgentError) for no scenarios, a
    bad seed list or an agent no worker can load, and the setup errors of
    :func:`simulate_one`.
    """
    from .runner import score_recorded

    if not scenarios:
        raise AgentError("run_scenarios: no scenarios given")
    from .worker_pool import pool_for

    results: list[SimulationResult] = []
    pairs: list[tuple[Trajectory, Case]] = []
    leak_scorer = getattr(context, "semantic_scorer", None)
    summary: dict[str, dict[str, Any]] = {}
    pool = pool_for(agent, isolation)
    try:
        per = [simulate(sc, agent, user_model, seeds=seeds, tools=tools, sandbox_url=sandbox_url,
                        base_dir=base_dir, fixture_roots=fixture_roots, isolation=isolation, _pool=pool)
               for sc in scenarios]
    finally:
        if pool is not None:
            pool.close()
    for sc, rs in zip(scenarios, per):
        case = sc.to_case()
        terms: dict[str, int] = {}
        flagged: list[dict[str, Any]] = []
        for r in rs:
            terms[r.termination] = terms.get(r.termination, 0) + 1
            rev = unprompted_reveals(r, sc, scorer=leak_scorer)
            flagged.extend({"seed": r.seed, **f} for f in rev.parts["flagged"])
            pairs.append((r.trajectory, case))
        results.extend(rs)
        summary[sc.id] = {"runs": len(rs), "termination": terms, "unprompted_reveals": flagged}
    if out is not None:
        lines = [json.dumps(r.trajectory.to_dict(), ensure_ascii=False, default=str) for r in results]
        try:
            Path(out).write_text("\n".join(lines) + "\n", encoding="utf-8")
        except OSError as e:
            raise AgentError(f"cannot write {out}: {e}") from e
    card = score_recorded(pairs, ks=ks, seed=seed, context=context,
                          meta={"agent": agent_name, "trials": len(seeds), "scenarios": summary})
    return ScenarioRun(card, tuple(results), summary)


# --------------------------------------------------------------------------- the reveal check


LEAK_THRESHOLD = 0.65
"""Default cosine (all-MiniLM-L6-v2) at which a user sentence reveals a hidden fact's value,
or an agent sentence asks for it (against "what is your <ask phrase>?"). Measured on
help-desk facts (tests/test_simulate_leaks.py asserts them): paraphrased leaks scored
0.8015, 0.7659, 0.7609, 0.7367, 0.6521, 0.5924; sentences that do not reveal the fact
(same topic, other words) 0.1585-0.5583. 0.65 finds 5 of the 6 paraphrases and none of the
8 non-leaks. Asking: "When did you start?" 0.7039, "Who is your manager?" 0.9256, "Which
ticket do you mean?" 0.8219 pass; "Who do you report to?" (0.3755) does not, so list such
phrasings as the fact's ``keywords``."""


def _contains_phrase(text: str, phrase: str) -> bool:
    t, p = normalize_text(text), normalize_text(phrase)
    if not p:
        return False
    return re.search(r"(?<!\w)" + re.escape(p) + r"(?!\w)", t) is not None


def _id_like(value: str) -> bool:
    from ..match.matchers import _exact_kind

    return _exact_kind(value)


def _contains_tokens(text: str, value: str) -> bool:
    """The value's letters-and-digits runs appear contiguously in the text's: "A. Rao" and
    "A.Rao" reveal ``a.rao``; "123" does not reveal ``12``."""
    t = re.findall(r"[^\W_]+", normalize_text(text))
    v = re.findall(r"[^\W_]+", normalize_text(value))
    return bool(v) and any(t[i:i + len(v)] == v for i in range(len(t) - len(v) + 1))


def _sentences(text: str) -> list[str]:
    return [x.strip() for x in re.split(r"(?<=[.!?])\s+|\n+", text) if x.strip()]


class _LeakTest:
    """How a message reveals or asks for a fact: literal text, and with a scorer, similarity
    of sentences (``how`` says which decided; ``sim`` the best cosine seen)."""

    def __init__(self, scorer: Callable[[str, str], float] | None, threshold: float) -> None:
        self.scorer, self.threshold = scorer, threshold

    def _best(self, probe: str, text: str) -> float:
        assert self.scorer is not None
        return max((float(self.scorer(probe, s)) for s in _sentences(text)), default=0.0)

    def reveals(self, text: str, value: str) -> tuple[str | None, float | None]:
        if _contains_phrase(text, value):
            return "literal", None
        if _id_like(value):  # IDs, numbers, dates: never on similarity (as the matcher)
            return ("literal", None) if _contains_tokens(text, value) else (None, None)
        if self.scorer is None:
            return None, None
        sim = self._best(value, text)
        return ("semantic" if sim >= self.threshold else None), sim

    def asks(self, text: str, phrases: Sequence[str]) -> bool:
        if any(_contains_phrase(text, p) for p in phrases):
            return True
        if self.scorer is None:
            return False
        return any(self._best(f"what is your {p}?", text) >= self.threshold for p in phrases)


def unprompted_reveals(result: SimulationResult | Trajectory, scenario: Scenario, *,
                       scorer: Callable[[str, str], float] | None = None,
                       threshold: float | None = None) -> MetricResult:
    """Hidden facts the simulated user revealed before the agent asked for them.

    Seed 000 §7.1: simulated users "sometimes leak hidden_facts unprompted". A fact is
    revealed in the first user message that contains its ``value``; it was asked for when
    some agent message (assistant text) before that one contains one of its ask phrases
    (``keywords``, default the name with ``_`` as a space). Comparisons are on normalized
    text (NFKC, casefold, whitespace collapsed) at word boundaries; a value that looks like
    an ID, number or date (``a.rao``, ``INC-7``, ``2026-07-18``) also matches with other
    punctuation between its letters and digits ("A. Rao").

    With ``scorer`` (``scorer(a, b) -> [0, 1]``, e.g. ``trajcheck.match.semantic.EmbeddingScorer``)
    paraphrases count too: a user message reveals a fact when one of its sentences scores at
    least ``threshold`` (default :data:`LEAK_THRESHOLD` 0.65) against the value ("The dock
    keeps losing both screens every couple of minutes." reveals "My docking station drops
    both monitors every few minutes.", 0.737), and an agent message asks for it when one of
    its sentences scores that much against "what is your <ask phrase>?". ID-like values
    are never found by similarity. The scenario's own ``opening`` (written by the
    scenario's author, not the model) is not checked.

    Score = 1 - flagged / revealed in [0, 1] (None when no fact was revealed); passed =
    nothing flagged; ``parts``: ``revealed`` (fact names), ``flagged`` (``{"fact", "turn",
    "how"}``, turn = 0-based user message, how = literal or semantic, plus ``similarity``
    for a semantic find), ``match`` (literal or semantic). Raises TrajcheckError for a
    ``result`` that is neither a SimulationResult nor a Trajectory, or a threshold outside
    [0, 1].
    """
    traj = result.trajectory if isinstance(result, SimulationResult) else result
    if not isinstance(traj, Trajectory):
        raise TrajcheckError(f"unprompted_reveals: expected a SimulationResult or Trajectory, "
                             f"got {type(result).__name__}")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                                  or not 0.0 <= threshold <= 1.0):
        raise TrajcheckError(f"unprompted_reveals: threshold must be in [0, 1], got {threshold!r}")
    test = _LeakTest(scorer, LEAK_THRESHOLD if threshold is None else float(threshold))
    mode = "literal" if scorer is None else "semantic"
    msgs = [(s.kind, s.content or "") for s in traj.steps if s.kind in ("user", "assistant")]
    flagged: list[dict[str, Any]] = []
    revealed: list[str] = []
    for f in scenario.hidden_facts:
        uturn = -1
        for i, (kind, text) in enumerate(msgs):
            if kind != "user":
                continue
            uturn += 1
            if uturn == 0 and scenario.opening is not None:
                continue
            how, sim = test.reveals(text, f.value)
            if how is not None:
                revealed.append(f.name)
                asked = any(k == "assistant" and test.asks(t, f.ask_phrases) for k, t in msgs[:i])
                if not asked:
                    item: dict[str, Any] = {"fact": f.name, "turn": uturn, "how": how}
                    if how == "semantic":
                        item["similarity"] = sim
                    flagged.append(item)
                break
    if not revealed:
        return MetricResult("unprompted_reveals", None, "no hidden fact was revealed",
                            {"revealed": [], "flagged": [], "match": mode}, True)
    score = 1.0 - len(flagged) / len(revealed)
    reason = (f"{len(revealed)} hidden fact(s) revealed, all after the agent asked" if not flagged
              else "revealed without being asked: " + ", ".join(
                  f"{x['fact']} (user turn {x['turn']}{', paraphrased' if x['how'] == 'semantic' else ''})"
                  for x in flagged))
    return MetricResult("unprompted_reveals", score, reason,
                        {"revealed": revealed, "flagged": flagged, "match": mode}, not flagged)


__all__ = [
    "GIVE_UP_MARKER",
    "STOP_MARKER",
    "TERMINATION_LABELS",
    "termination_label",
    "HiddenFact",
    "LEAK_THRESHOLD",
    "Scenario",
    "ScenarioRun",
    "SimulationResult",
    "load_scenarios",
    "load_user_model",
    "run_scenarios",
    "simulate",
    "simulate_one",
    "unprompted_reveals",
    "user_messages",
    "user_system_prompt",
]
