"""docs/hosts/<host>.md stay true to the code: each page's settings-key table lists exactly the
keys the settings parser accepts (``adapters._settings.SETTING_KEYS``), says for each whether
the host's constructor takes it (introspected from the adapter) and whether it is read at the
top level of a shared mapping (``_settings.OWN_KEYS``) or only in the ``"trajcheck"`` block, writes
lists of names in the host's convention (promptfoo: comma strings), names every joined list in
its precedence section, and every python block on the page runs (in the real host where the
host's extra is installed)."""

from __future__ import annotations

import dataclasses
import re
import warnings
from pathlib import Path

import pytest

from trajcheck.adapters import _catalog, _settings

DOCS = Path(__file__).resolve().parents[1] / "docs" / "hosts"
#: page -> the module its python blocks need (skipped without it)
HOSTS = {"deepeval": "deepeval", "ragas": "ragas", "langsmith": "langsmith", "mlflow": "mlflow",
         "inspect_ai": "inspect_ai", "pydantic_evals": "pydantic_evals", "promptfoo": None}
#: pages whose test-case mapping is shared with the team's data (trajcheck block or top level)
NAMESPACED = {"deepeval", "ragas", "inspect_ai", "pydantic_evals", "promptfoo"}


def _page(host: str) -> str:
    return (DOCS / f"{host}.md").read_text(encoding="utf-8")


def _section(text: str, title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"no section '## {title}'"
    return m.group(1)


def _key_rows(text: str) -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in _section(text, "Settings keys").splitlines():
        m = re.match(r"\| `([^`]+)` \|(.*)\|\s*$", line)
        if m:
            assert m.group(1) not in rows, f"key {m.group(1)} twice"
            rows[m.group(1)] = [c.strip() for c in m.group(2).split("|")]
    return rows


def _constructor_keys(host: str) -> set[str]:
    """The settings the host's constructor (promptfoo: the assertion config) accepts, from the code."""
    case_and_match = set(_catalog.CASE_KEYS) | {"match"}
    if host == "promptfoo":
        return set(_settings.SETTING_KEYS) - set(_settings.FLAT_RUN_KEYS)
    if host == "ragas":
        pytest.importorskip("ragas")
        from trajcheck.adapters import ragas

        return {f.name for f in dataclasses.fields(ragas.TrajcheckRagasMetric)} & set(_settings.SETTING_KEYS)
    if host == "deepeval":
        pytest.importorskip("deepeval")
        import inspect

        from trajcheck.adapters import deepeval

        return set(inspect.signature(deepeval.TrajcheckMetric.__init__).parameters) & set(_settings.SETTING_KEYS)
    return case_and_match  # make_spec / TrajcheckEvaluator: _catalog.CASE_KEYS and the match option


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_key_table_is_the_parser(host):
    text = _page(host)
    rows = _key_rows(text)
    assert set(rows) == set(_settings.SETTING_KEYS), (
        f"missing {sorted(set(_settings.SETTING_KEYS) - set(rows))}, "
        f"not accepted {sorted(set(rows) - set(_settings.SETTING_KEYS))}")
    for k in rows:  # every key named is one the parser accepts
        assert _settings.read({k: None}, "page") == {k: None}
    ctor = _constructor_keys(host)
    for k, (value, in_ctor, in_case) in rows.items():
        assert in_ctor == ("yes" if k in ctor else "no"), (host, k, in_ctor)
        if k in _settings.FLAT_RUN_KEYS and host != "deepeval":
            assert in_case.startswith("error"), (host, k, in_case)
        elif host in NAMESPACED:
            want = "block or top level" if k in _settings.OWN_KEYS else "block only"
            assert in_case.startswith(want), (host, k, in_case)
        if k in _settings.NAME_LIST_KEYS:
            assert ("comma string" in value) == (host == "promptfoo"), (host, k, value)
    with pytest.raises(Exception, match="did you mean"):
        _settings.read({"forbiden_calls": []}, "page")


def test_promptfoo_options_table_is_the_assertions():
    from trajcheck.promptfoo.assertion import OPTION_KEYS

    sec = _section(_page("promptfoo"), "Options (assertion `config` or `vars.trajcheck`)")
    names = re.findall(r"^\| `([^`]+)` \|", sec, re.M)
    assert sorted(names) == sorted(OPTION_KEYS)


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_precedence_section_names_every_joined_list(host):
    sec = _section(_page(host), "Precedence")
    for k in _settings.UNION_KEYS:
        assert f"`{k}`" in sec, (host, k)
    assert "union" in sec and "error" in sec.lower()


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_page_has_every_part(host):
    text = _page(host)
    for title in ("Install", "Settings keys", "Precedence", "Parallel and failed calls", "Example"):
        _section(text, title)
    assert "not applicable" in text.lower() and "missing reference" in text.lower()
    assert f"hosts/{host}.md" in (DOCS.parent / "hosts.md").read_text(encoding="utf-8")


def _blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_python_examples_run(host, tmp_path, monkeypatch):
    mod = HOSTS[host]
    if mod is not None:
        pytest.importorskip(mod)
    blocks = _blocks(_page(host))
    assert blocks, f"{host}: no python example"
    monkeypatch.chdir(tmp_path)
    if host == "mlflow":
        monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
        monkeypatch.setenv("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")
        monkeypatch.setenv("MLFLOW_TRACKING_URI", (tmp_path / "mlruns").as_uri())
        import mlflow

        before = mlflow.get_tracking_uri()
        mlflow.set_tracking_uri((tmp_path / "mlruns").as_uri())
    try:
        _run_blocks(host, blocks)
    finally:
        if host == "mlflow":
            mlflow.set_tracking_uri(before)


def _run_blocks(host: str, blocks: list[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ns: dict = {"__name__": f"docs_hosts_{host}"}
        for code in blocks:
            exec(compile(code, f"docs/hosts/{host}.md", "exec"), ns)  # noqa: S102


def test_adapter_docstrings_link_their_page():
    root = DOCS.parents[1]
    files = {"deepeval": "adapters/deepeval.py", "ragas": "adapters/ragas.py",
             "langsmith": "adapters/langsmith.py", "mlflow": "adapters/mlflow.py",
             "inspect_ai": "adapters/inspect_ai.py", "pydantic_evals": "adapters/pydantic_evals.py",
             "promptfoo": "promptfoo_provider/assertion.py"}
    for host, f in files.items():
        head = (root / f).read_text(encoding="utf-8").split('"""')[1]
        assert f"docs/hosts/{host}.md" in head, f


def test_flat_run_keys_are_an_error_outside_deepeval():
    """``failed_calls``/``parallel_calls`` index DeepEval's flat ``tools_called``; elsewhere they
    were accepted and did nothing (a failed call listed there still counted): now an error
    naming where the run marks them."""
    from trajcheck.errors import DatasetError
    from trajcheck.promptfoo.assertion import get_assert

    out = {"tool_calls": [{"name": "a", "args": {}}, {"name": "a", "args": {}}]}
    res = get_assert(out, {"vars": {}, "config": {"expected_calls": ["a"], "failed_calls": [0]}})
    assert res["pass"] is False and "DeepEval test cases only" in res["reason"]
    pytest.importorskip("langsmith")
    from trajcheck.adapters.langsmith import TrajcheckEvaluator

    with pytest.raises(DatasetError, match="parallel_calls.*DeepEval test cases only"):
        TrajcheckEvaluator("tool_call_f1")(outputs=out, reference_outputs={"expected_calls": ["a"],
                                                                           "parallel_calls": [[0, 1]]})
    pytest.importorskip("mlflow")
    from trajcheck.adapters.mlflow import TrajcheckScorer

    with pytest.raises(DatasetError, match="failed_calls.*error flag"):
        TrajcheckScorer("tool_call_f1")(outputs=out, expectations={"expected_calls": ["a"], "failed_calls": [0]})
    pytest.importorskip("deepeval")
    from deepeval.test_case import LLMTestCase, ToolCall

    from trajcheck.adapters.deepeval import ToolCallF1Metric

    tc = LLMTestCase(input="i", actual_output="o", tools_called=[ToolCall(name="a"), ToolCall(name="a")],
                     expected_tools=[ToolCall(name="a")], metadata={"trajcheck": {"failed_calls": [0]}})
    assert ToolCallF1Metric().measure(tc) == 1.0  # read in DeepEval: the failed first call is set aside
