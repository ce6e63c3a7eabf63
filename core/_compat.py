"""Import paths from before the stage packages (``trajcheck.scoring``, ``trajcheck.traces``,
...), kept working for code written against them.

Each old name is an alias of the new module, the same object (so ``isinstance`` checks and
monkeypatching agree whichever path a caller used). Installed by ``trajcheck/__init__``; new
code imports the new paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

# old module under ``trajcheck.`` -> its new home under ``trajcheck.``
MOVED: dict[str, str] = {
    **{m: f"read.{m}" for m in ("dataset", "intake", "eval_case", "limits", "case_store")},
    "traces": "read.traces",
    **{m: f"match.{m}" for m in ("matchers", "matching", "exact_match", "field_matcher",
                                 "explain", "safe_regex", "bfcl", "semantic",
                                 "semantic_calibration", "semantic_integrity")},
    **{m: f"score.{m}" for m in ("scoring", "fast_scoring", "fast_figures", "fast_outcome",
                                 "fused_scoring", "run_matching", "runmemo", "case_plan",
                                 "row_plan", "json_copy", "run_detail", "pipeline", "suite",
                                 "fingerprint")},
    "case_sums": "aggregate.case_sums",
    "categories": "aggregate.categories",
    "compare": "aggregate.paired",
    "compare_cases": "aggregate.paired_cases",
    "scorecard": "report.scorecard",
    "otel_events": "report.otel_events",
    "cli_judges": "cli.judges",
    "runner": "run.runner",
    "sandbox": "run.sandbox",
    "simulate": "run.simulated_user",
    "tools": "run.tools",
}


def new_name(fullname: str) -> str | None:
    """The new dotted name of an old ``trajcheck.*`` module name, or None if it did not move.

    Args:
        fullname: a dotted module name, e.g. ``"trajcheck.traces.otel"``.

    Returns:
        The module's current name (``"trajcheck.read.traces.otel"``), or None.
    """
    if not fullname.startswith("trajcheck."):
        return None
    rest = fullname[len("trajcheck."):]
    head, dot, tail = rest.partition(".")
    target = MOVED.get(head)
    if target is None:
        return None
    return f"trajcheck.{target}{dot}{tail}"


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(f"{spec.name} moved to {self.target}; import it from there",
                      DeprecationWarning, stacklevel=2)
        module = importlib.import_module(self.target)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system stamped the alias's spec on the shared module; give its own back.
        module.__spec__ = self._spec


class _OldPaths(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):  # type: ignore[no-untyped-def]
        new = new_name(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new))


def install() -> None:
    """Put the old-path finder on ``sys.meta_path`` once (idempotent)."""
    if not any(isinstance(f, _OldPaths) for f in sys.meta_path):
        # First: a moved package's submodule would otherwise be found again by the path finder
        # through the alias's __path__, as a second copy under the old name.
        sys.meta_path.insert(0, _OldPaths())
