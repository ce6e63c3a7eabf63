"""Old import path of ``trajcheck.run.simulated_user``, kept so code written against earlier
README and examples (``from trajcheck.simulate import ...``) still runs; new code imports from
``trajcheck.run``. Importing it warns (DeprecationWarning)."""

import warnings

from .run.simulated_user import (
    GIVE_UP_MARKER,
    LEAK_THRESHOLD,
    STOP_MARKER,
    TERMINATION_LABELS,
    HiddenFact,
    Scenario,
    ScenarioRun,
    SimulationResult,
    load_scenarios,
    load_user_model,
    run_scenarios,
    simulate,
    simulate_one,
    termination_label,
    unprompted_reveals,
    user_messages,
    user_system_prompt,
)

warnings.warn("trajcheck.simulate is now trajcheck.run.simulated_user; import from trajcheck.run",
              DeprecationWarning, stacklevel=2)

__all__ = [
    "GIVE_UP_MARKER", "HiddenFact", "LEAK_THRESHOLD", "STOP_MARKER", "Scenario", "ScenarioRun",
    "SimulationResult", "TERMINATION_LABELS", "load_scenarios", "load_user_model", "run_scenarios",
    "simulate", "simulate_one", "termination_label", "unprompted_reveals", "user_messages",
    "user_system_prompt",
]
