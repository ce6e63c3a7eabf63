"""Every public metric function (``trajcheck.metrics.catalog.PUBLIC_METRICS``) has a
docstring that leads with Args and Returns after its summary, and an Examples section whose
doctest runs here and gives the hand-checked value written in it.

The catalog is held complete from both sides: every core function a host metric names
(``adapters._catalog.ROW_METRICS``' ``core`` column) and every function on the API pages
(docs/api/*.md) is in it.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest

from trajcheck.metrics.catalog import PUBLIC_METRICS

ROOT = Path(__file__).resolve().parents[1]


def _function(qualified: str):
    module, name = qualified.split(":")
    return importlib.import_module(module), getattr(importlib.import_module(module), name)


def _sections(doc: str) -> list[str]:
    """The Google-style section headers of ``doc``, in order."""
    return re.findall(r"^(Args|Arguments|Returns|Raises|Examples|Example):\s*$",
                      inspect.cleandoc(doc), flags=re.M)


@pytest.mark.parametrize("qualified", PUBLIC_METRICS)
def test_docstring_leads_with_args_returns_and_has_an_example(qualified):
    _, fn = _function(qualified)
    doc = fn.__doc__ or ""
    heads = _sections(doc)
    assert heads[:2] == ["Args", "Returns"], f"{qualified}: sections {heads}"
    assert "Examples" in heads, f"{qualified}: no Examples section"
    # what comes before Args is the summary: a paragraph, not the policy text
    summary = inspect.cleandoc(doc).split("\nArgs:")[0]
    assert summary.count("\n\n") == 0 and len(summary) <= 300, f"{qualified}: long summary"
    # every parameter is described under Args
    args_block = inspect.cleandoc(doc).split("\nArgs:")[1].split("\nReturns:")[0]
    for p in inspect.signature(fn).parameters:
        assert re.search(rf"^\s+(\w+, )*{p}(, \w+)*:", args_block, flags=re.M), \
            f"{qualified}: parameter {p!r} not under Args"


@pytest.mark.parametrize("qualified", PUBLIC_METRICS)
def test_docstring_example_runs(qualified):
    module, fn = _function(qualified)
    tests = doctest.DocTestFinder(recurse=False).find(fn, qualified, module=module,
                                                       globs=dict(vars(module)))
    examples = sum(len(t.examples) for t in tests)
    assert examples >= 1, f"{qualified}: no doctest example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    out: list[str] = []
    for t in tests:
        runner.run(t, out=out.append)
    assert runner.failures == 0, "".join(out)


def test_every_host_metric_core_function_is_in_the_catalog():
    from trajcheck.adapters._catalog import ROW_METRICS

    names = {q.split(":")[0].removeprefix("trajcheck.") + "." + q.split(":")[1] for q in PUBLIC_METRICS}
    missing = []
    for row in ROW_METRICS:
        for ref in re.findall(r"metrics\.\w+\.\w+", row.core):
            if ref not in names:
                missing.append((row.key, ref))
    assert missing == []
    assert len(ROW_METRICS) >= 20


def test_every_api_page_function_is_in_the_catalog():
    listed = set()
    for page in (ROOT / "docs" / "api").glob("*.md"):
        text = page.read_text(encoding="utf-8")
        for module, members in re.findall(r"^::: (trajcheck\.metrics\.\w+)\n\s+options:\n\s+members: \[([^]]*)\]",
                                          text, flags=re.M):
            for m in members.split(","):
                obj = getattr(importlib.import_module(module), m.strip())
                if inspect.isfunction(obj):
                    listed.add(f"{module}:{m.strip()}")
    assert len(listed) >= 10
    helpers = {"trajcheck.metrics.trajectory:normalize_mode"}  # a mode-name lookup, no figure
    assert sorted(listed - set(PUBLIC_METRICS) - helpers) == []


def test_catalog_names_resolve_once():
    assert len(set(PUBLIC_METRICS)) == len(PUBLIC_METRICS)
    for q in PUBLIC_METRICS:
        assert inspect.isfunction(_function(q)[1]), q
