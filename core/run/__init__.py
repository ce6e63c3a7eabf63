"""Running agents under test, beside the read -> score -> aggregate -> report pipeline.

- ``runner``: the agent contract, ``run_suite`` (cases x trials, timeouts, resume from the
  run file) and scoring what it recorded; beside it ``agent_loading`` (``load_agent``,
  ``resolve_tools``), ``agent_return`` (``AgentRun``, reading what an agent returns),
  ``run_file`` (``read_runs`` and the signed, locked writer) and ``trial_run`` (one
  (case, trial) run in its thread, and its trace);
- ``tools``: the tool registry that validates, runs and records an agent's calls;
- ``sandbox``: a fresh database per trial from a case's fixture, and its snapshots;
- ``faults``: injected tool failures, deterministic given a seed;
- ``simulated_user``: conversations between a simulated-user model and the agent;
- ``worker`` and ``worker_pool``: process isolation of the agent, the worker process (its
  JSON protocol; ``python -m trajcheck.run.worker FD``) and the runner's side of it.

The public names below are importable from ``trajcheck.run`` itself. They are loaded on
first use: the worker process imports this package before its own module and must start
without the registry, the sandbox or jsonschema.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names for type checkers; at run time they load on first use
    from .agent_loading import load_agent, resolve_tools
    from .agent_return import AgentRun
    from .faults import FAULT_KINDS, Fault, InjectedFault, apply_faults, flaky, parse_faults
    from .run_file import RecordedRuns, read_runs
    from .runner import SuiteRun, run_suite
    from .sandbox import SQLAlchemySandbox, SQLiteSandbox, call_tool, open_sandbox, resolve_fixture
    from .simulated_user import (
        GIVE_UP_MARKER,
        STOP_MARKER,
        HiddenFact,
        Scenario,
        ScenarioRun,
        SimulationResult,
        load_scenarios,
        load_user_model,
        run_scenarios,
        simulate,
        simulate_one,
        unprompted_reveals,
    )
    from .tools import AgentTools, BoundTools, Tool, ToolContext, ToolRegistry, normalize_definition

# public name -> the module of this package that defines it
_WHERE = {
    **dict.fromkeys(("FAULT_KINDS", "Fault", "InjectedFault", "apply_faults", "flaky", "parse_faults"),
                    "faults"),
    **dict.fromkeys(("load_agent", "resolve_tools"), "agent_loading"),
    "AgentRun": "agent_return",
    **dict.fromkeys(("RecordedRuns", "read_runs"), "run_file"),
    **dict.fromkeys(("SuiteRun", "run_suite"), "runner"),
    **dict.fromkeys(("SQLAlchemySandbox", "SQLiteSandbox", "call_tool", "open_sandbox", "resolve_fixture"),
                    "sandbox"),
    **dict.fromkeys(("GIVE_UP_MARKER", "STOP_MARKER", "HiddenFact", "Scenario", "ScenarioRun",
                     "SimulationResult", "load_scenarios", "load_user_model", "run_scenarios", "simulate",
                     "simulate_one", "unprompted_reveals"), "simulated_user"),
    **dict.fromkeys(("AgentTools", "BoundTools", "Tool", "ToolContext", "ToolRegistry",
                     "normalize_definition"), "tools"),
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module 'trajcheck.run' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(_WHERE))


__all__ = [
    "AgentRun", "AgentTools", "BoundTools", "FAULT_KINDS", "Fault", "GIVE_UP_MARKER", "HiddenFact",
    "InjectedFault", "RecordedRuns", "SQLAlchemySandbox", "SQLiteSandbox", "STOP_MARKER",
    "Scenario", "ScenarioRun", "SimulationResult", "SuiteRun", "Tool", "ToolContext",
    "ToolRegistry", "apply_faults", "call_tool", "flaky", "load_agent", "load_scenarios",
    "load_user_model", "normalize_definition", "open_sandbox", "parse_faults", "read_runs",
    "resolve_fixture", "resolve_tools", "run_scenarios", "run_suite", "simulate", "simulate_one",
    "unprompted_reveals",
]
