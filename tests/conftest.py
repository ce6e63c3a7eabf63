"""Test tiers and optional extras, decided in one place.

Tiers: each test file belongs to at most one of the markers below, by its name; `make
test-fast` (`pytest --core-only`) runs what is in none of them (the core's tests) without
importing the others, `-m "not host"` and the like select by tier, `make test` runs everything.

Extras: a test file that imports a package of an extra that is not installed is skipped as a
whole (top-level import) or per test (an import inside the test function), with the extra to
install named; so `pip install -e '.[dev]'` then pytest is green, with skips, not errors.
"""

from __future__ import annotations

import ast
import importlib.util
from functools import cache
from pathlib import Path

import pytest

# marker -> test file name prefixes (tests/<prefix>*.py)
TIERS: dict[str, tuple[str, ...]] = {
    "host": ("test_adapter_", "test_host_", "test_promptfoo_", "test_framework_bugs",
             "test_differential", "test_fuzz_adapters", "test_sdk_langgraph_langsmith"),
    "engine": ("test_engine_", "test_engines_", "test_jvm_archive", "test_range_server"),
    "browser": ("test_html_browser",),
    "sdk": ("test_sdk_",),
    "slow": ("test_fuzz", "test_scale_memory", "test_semantic", "test_planning_semantic",
             "test_sandbox", "test_runner_security", "test_runner_isolation", "test_isolation_attacks",
             "test_pytest_plugin", "test_thread_safety",
             # MiniLM (semantic extra) loaded and run: 65 s and 7 s of the core tier at load 1-3
             "test_examples_helpdesk", "test_simulate_leaks"),
}

# xdist group -> test file name prefixes: `make test` runs two workers (`-n 2 --dist
# loadgroup`); files that share a fixed port (promptfoo's OTLP receiver on 4318), the one
# PostgreSQL cluster, or a JVM / Ray cluster and its cache run in one worker, one after another
GROUPS: dict[str, tuple[str, ...]] = {
    "promptfoo": ("test_promptfoo_",),
    "postgres": ("test_sandbox", "test_isolation_attacks"),
    "jvm": ("test_engine_spark", "test_jvm_archive", "test_engines_"),
    "ray": ("test_engine_ray",),
    "side-venvs": ("test_differential_dialects", "test_sdk_traces_adk"),  # build .cache/*-venv
}

# import name -> the extra that installs it
EXTRA_OF: dict[str, str] = {
    "deepeval": "deepeval", "ragas": "ragas", "langsmith": "langsmith",
    "langchain_core": "langchain", "langchain": "langchain", "langgraph": "langchain",
    "sentence_transformers": "semantic", "torch": "semantic",
    "httpx": "judges", "anthropic": "judges", "sqlalchemy": "sql", "psycopg": "sql",
    "pyarrow": "arrow", "pyspark": "spark", "ray": "ray",
    "opentelemetry": "otel", "openinference": "otel", "openai": "otel",
    "agents": "agent-sdks", "pydantic_ai": "agent-sdks", "mlflow": "agent-sdks",
    "inspect_ai": "agent-sdks", "pydantic_evals": "pydantic-evals",
    "openevals": "dev", "agentevals": "dev", "hypothesis": "dev", "websockets": "dev",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--core-only", action="store_true",
                     help="only the core's tests: files of every tier are not even imported")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if config.getoption("--core-only") and collection_path.suffix == ".py" and _tier(collection_path):
        return True
    return None


def pytest_configure(config: pytest.Config) -> None:
    for name in TIERS:
        config.addinivalue_line("markers", f"{name}: tests of the {name} tier (see tests/conftest.py)")


def _tier(path: Path) -> str | None:
    for name, prefixes in TIERS.items():
        if path.name.startswith(prefixes):
            return name
    return None


@cache
def _installed(root: str) -> bool:
    return importlib.util.find_spec(root) is not None


def _missing(nodes: list[ast.stmt]) -> str | None:
    """The first optional package imported by these statements (not nested in a function)
    that is not installed, as "package (extra)"."""
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and sub is not node:
                continue
            roots = []
            if isinstance(sub, ast.Import):
                roots = [a.name.split(".")[0] for a in sub.names]
            elif isinstance(sub, ast.ImportFrom) and sub.level == 0 and sub.module:
                roots = [sub.module.split(".")[0]]
            for r in roots:
                if r in EXTRA_OF and not _installed(r):
                    return f"{r} (pip install -e '.[{EXTRA_OF[r]}]')"
    return None


@cache
def _file_needs(path: Path) -> tuple[str | None, dict[str, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    per_function = {}
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            miss = _missing(list(n.body))
            if miss:
                per_function[n.name] = miss
    return _missing(top), per_function


class _SkippedModule(pytest.Module):
    reason = ""

    def collect(self):  # type: ignore[override]
        pytest.skip(self.reason)


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector):  # type: ignore[no-untyped-def]
    miss, _ = _file_needs(module_path)
    if miss:
        mod = _SkippedModule.from_parent(parent, path=module_path)
        mod.reason = f"needs {miss}"
        return mod
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.fspath))
        tier = _tier(path)
        if tier:
            item.add_marker(getattr(pytest.mark, tier))
        group = next((g for g, pre in GROUPS.items() if path.name.startswith(pre)), None)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
        _, per_function = _file_needs(path)
        func = getattr(item, "originalname", None) or item.name.split("[")[0]
        if func in per_function:
            item.add_marker(pytest.mark.skip(reason=f"needs {per_function[func]}"))
