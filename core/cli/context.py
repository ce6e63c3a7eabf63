"""What the shared options build before scoring: the semantic matcher's MatchContext
(``--semantic``) and the judge model (``--judge``)."""

from __future__ import annotations

from typing import Any

from .output import fail


def match_context(semantic: bool, threshold: float | None, cases: object, err: Any) -> Any:
    """The MatchContext for ``--semantic [--semantic-threshold T]`` (``trajcheck.match.semantic``,
    imported here; MatcherError when the semantic extra is missing), else None. Without
    ``--semantic``, cases whose ``semantic`` matchers have no ``fallback`` raise MatcherError
    naming them, and those with one are scored by it (a note on ``err`` says so)."""
    from ..errors import MatcherError
    from ..match.semantic import check_available, semantic_context, semantic_uses

    if not semantic and threshold is None:
        cs = cases if isinstance(cases, (list, tuple)) else []
        uses = semantic_uses(cs, without_fallback=True)
        if uses:
            more = f" and {len(uses) - 3} more" if len(uses) > 3 else ""
            raise MatcherError(f"the cases use the 'semantic' matcher ({'; '.join(uses[:3])}{more}): "
                               "pass --semantic to score them with the offline embedding model "
                               "(the 'semantic' extra)")
        n_fb = len(semantic_uses(cs))
        if n_fb:
            err.print(f"note: {n_fb} 'semantic' argument check(s) scored by their fallback matcher; "
                      "pass --semantic to use the embedding model", highlight=False, soft_wrap=True)
        return None
    check_available()
    return semantic_context(threshold=threshold)


def judge_setup(spec: str | None, cache: str | None, price: str | None, err: Any) -> Any:
    """``(model behind its reply cache, price)`` for ``--judge``/``--judge-cache``/
    ``--judge-price``, or None without ``--judge``; a bad spec or price fails (exit 2) before
    any agent runs."""
    if not spec:
        return None
    from ..errors import TrajcheckError
    from ..judges.run import cached, model_from_spec, parse_price

    try:
        pr = parse_price(price)  # before the cache file is created
        return cached(model_from_spec(spec), cache or None), pr
    except TrajcheckError as e:
        fail(e, err)
