"""Names in the hosts: no exported name of a trajcheck adapter equals a public name of the host
it plugs into (importing both never shadows one: DeepEval's own ``ArgumentCorrectnessMetric``
is an LLM metric), and every trajectory mode of every dialect gets its own result name in each
host, carrying the neutral mode and, for a framework's mode name, the dialect and that name."""

from __future__ import annotations

import importlib
import warnings

import pytest

from trajcheck.metrics.trajectory import MODE_TABLE, NEUTRAL_MODES, normalize_mode

warnings.filterwarnings("ignore", category=DeprecationWarning)

#: adapter module -> the host modules whose public names it must not reuse
HOSTS = {"deepeval": ["deepeval", "deepeval.metrics", "deepeval.test_case"],
         "ragas": ["ragas", "ragas.metrics", "ragas.metrics.collections"],
         "langsmith": ["langsmith", "langsmith.evaluation"],
         "mlflow": ["mlflow.genai", "mlflow.genai.scorers"],
         "inspect_ai": ["inspect_ai", "inspect_ai.scorer"],
         "pydantic_evals": ["pydantic_evals", "pydantic_evals.evaluators"]}
MODES = [(r.dialect, r.name) for r in MODE_TABLE] + [(None, m) for m in NEUTRAL_MODES]


def _public(mod: str) -> set[str]:
    m = importlib.import_module(mod)
    return set(getattr(m, "__all__", None) or [n for n in dir(m) if not n.startswith("_")])


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_no_adapter_name_is_a_hosts_own_name(host):
    pytest.importorskip(HOSTS[host][0])
    ours = set(importlib.import_module(f"trajcheck.adapters.{host}").__all__)
    for mod in HOSTS[host]:
        assert not ours & _public(mod), (host, mod, sorted(ours & _public(mod)))


def _names(host: str, mode: str, dialect: str | None) -> str:
    if host == "deepeval":
        from trajcheck.adapters.deepeval import TrajcheckMetric

        return TrajcheckMetric("trajectory_match", mode=mode, dialect=dialect).__name__
    if host == "ragas":
        from trajcheck.adapters.ragas import TrajcheckRagasMetric

        return TrajcheckRagasMetric(metric="trajectory_match", match_mode=mode, dialect=dialect).name
    if host == "langsmith":
        from trajcheck.adapters.langsmith import TrajcheckEvaluator

        return TrajcheckEvaluator("trajectory_match", mode=mode, dialect=dialect).key
    if host == "mlflow":
        from trajcheck.adapters.mlflow import TrajcheckScorer

        return TrajcheckScorer("trajectory_match", mode=mode, dialect=dialect).name
    if host == "inspect_ai":
        from inspect_ai._util.registry import registry_info

        from trajcheck.adapters.inspect_ai import trajcheck_scorer

        return registry_info(trajcheck_scorer("trajectory_match", mode=mode, dialect=dialect)).name
    from trajcheck.adapters.pydantic_evals import TrajcheckEvaluator as PE

    return PE("trajectory_match", mode=mode, dialect=dialect).get_default_evaluation_name()


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_every_mode_of_every_dialect_has_its_own_name(host):
    pytest.importorskip(HOSTS[host][0])
    seen: dict[str, tuple[str | None, str]] = {}
    for dialect, mode in MODES:
        name = _names(host, mode, dialect)
        assert name not in seen, (host, name, seen.get(name), (dialect, mode))
        seen[name] = (dialect, mode)
        neutral = normalize_mode(mode, dialect)
        low = name.lower()
        assert neutral in low, (host, name)
        if dialect is not None:
            assert dialect.lower().replace("-", "_") in low.replace("-", "_"), (host, name)
    assert len(seen) == len(MODES)
