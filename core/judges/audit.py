"""What a verdict records for audit, and a persistent cache of judge calls.

``model_identity(model)`` names the judge model and its sampling settings from the adapter's
own fields; ``prompt_hash(messages)`` is the SHA-256 of the first ask's messages as compact
JSON. :class:`JudgeCache` stores each model reply in SQLite (standard library) keyed by the
model identity, the rubric version and the exact messages sent, so a rerun with the same
inputs makes no model call and, replies being equal, gives the same verdict.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import JudgeError
from .fencing import MASK, masked, request_nonce

RUBRIC_VERSION = "2026-12-05.1"
"""Version of the judges' prompts and rubrics; changed whenever their wording changes, so
cached replies to an older prompt are never reused (it is part of every cache key)."""

_SAMPLING_KEYS = ("temperature", "top_p", "max_tokens", "seed", "extra_body")


def _jsonable(v: Any) -> Any:
    try:
        json.dumps(v)
        return v
    except (TypeError, ValueError):
        return repr(v)


def model_identity(model: Any) -> dict[str, Any]:
    """``{"adapter", "model", "sampling", ...}`` for a judge-model adapter (``as_model``'s
    result). ``model`` is the adapter's model name (an inner LangChain/DeepEval model's
    ``model_name``/``model``; a callable's ``module:qualname``); ``sampling`` the settings
    it sends (temperature, top_p, max_tokens, seed, extra_body) that it has; ``base_url``
    when it has one. An object may give its own via a ``judge_identity()`` method."""
    own = getattr(model, "judge_identity", None)
    if callable(own):
        return dict(own())
    inner = getattr(model, "inner", None)
    if inner is not None:
        return model_identity(inner)
    ident: dict[str, Any] = {"adapter": type(model).__name__}
    name = getattr(model, "model", None)
    fn = getattr(model, "fn", None)
    if isinstance(name, str):
        ident["model"] = name
    elif name is not None:  # LangChain / DeepEval wrap a model object
        ident["model"] = str(getattr(name, "model_name", None) or getattr(name, "model", None)
                             or type(name).__name__)
        ident["sampling"] = {k: _jsonable(getattr(name, k)) for k in _SAMPLING_KEYS
                             if getattr(name, k, None) is not None}
    elif fn is not None:
        ident["model"] = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"
    else:
        ident["model"] = type(model).__qualname__
    if "sampling" not in ident:
        ident["sampling"] = {k: _jsonable(getattr(model, k)) for k in _SAMPLING_KEYS
                             if getattr(model, k, None) not in (None, {})}
    if isinstance(getattr(model, "base_url", None), str):
        ident["base_url"] = model.base_url
    return ident


def prompt_hash(messages: Sequence[Any]) -> str:
    """SHA-256 hex digest of ``messages`` as compact, key-sorted JSON, a judge request's
    nonce written as ``<nonce>`` (``fencing.masked``: the same inputs, the same hash)."""
    nonce = request_nonce(messages)
    if nonce is not None:
        messages = masked(messages, nonce)
    blob = json.dumps(list(messages), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class JudgeCache:
    """A persistent store of judge replies in one SQLite file (``path``; created with its
    folder). ``get(key)``/``put(key, reply)``; ``hits``/``misses`` count look-ups since
    opening. Safe across threads (one lock). Raises JudgeError when the file cannot be
    opened as a database."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), check_same_thread=False)
            self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, "
                             "reply TEXT NOT NULL, identity TEXT NOT NULL)")
            self._db.commit()
        except (OSError, sqlite3.Error) as e:
            raise JudgeError(f"judge cache {self.path}: cannot open as SQLite: {e}") from e

    @staticmethod
    def key(identity: dict[str, Any], messages: Sequence[Any]) -> str:
        """The cache key: SHA-256 over the model identity (model, sampling settings), the
        rubric version and the exact messages."""
        blob = json.dumps({"identity": identity, "rubric_version": RUBRIC_VERSION,
                           "messages": list(messages)}, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def get(self, key: str) -> str | None:
        """The stored reply for ``key``, or None."""
        with self._lock:
            row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
            return str(row[0])

    def put(self, key: str, reply: str, identity: dict[str, Any]) -> None:
        """Store ``reply`` under ``key`` (replacing any older one)."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?, ?)",
                             (key, reply, json.dumps(identity, sort_keys=True)))
            self._db.commit()

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()


class CachedModel:
    """A judge model whose replies go through a :class:`JudgeCache`: a stored reply is
    returned without calling ``inner``; a new one is stored. ``inner`` is anything
    ``as_model`` accepts; ``cache`` a JudgeCache or a path. Its identity (and so the audit
    record) is the inner model's."""

    def __init__(self, inner: Any, cache: JudgeCache | str | Path):
        from .models import as_model

        self.inner = as_model(inner)
        self.cache = cache if isinstance(cache, JudgeCache) else JudgeCache(cache)
        self._identity = model_identity(self.inner)

    def with_seed(self, seed: int) -> CachedModel | None:
        """The inner model seeded (its ``with_seed``) behind the same cache, or None when the
        inner model takes no seed. The seed is part of the identity, so of every cache key."""
        fn = getattr(self.inner, "with_seed", None)
        got = fn(seed) if callable(fn) else None
        return None if got is None else CachedModel(got, self.cache)

    def judge_identity(self) -> dict[str, Any]:
        """The inner model's :func:`model_identity`."""
        return dict(self._identity)

    def _lookup(self, messages: Sequence[Any]) -> tuple[str, str | None, str | None]:
        """``(key, request nonce, cached reply or None)``. A judge request's nonce
        (``fencing``) is fresh each time: the key is over the messages with it masked, and
        a reply is stored with its request's nonce masked and given back with this
        request's in its place."""
        nonce = request_nonce(messages)
        keyed = messages if nonce is None else masked(messages, nonce)
        k = JudgeCache.key(self._identity, keyed)
        got = self.cache.get(k)
        if got is not None and nonce is not None:
            got = got.replace(MASK, nonce)
        return k, nonce, got

    def _store(self, k: str, nonce: str | None, reply: str) -> None:
        self.cache.put(k, reply if nonce is None else reply.replace(nonce, MASK), self._identity)

    def complete(self, messages: Sequence[Any]) -> str:
        """The cached reply, or ``inner.complete`` stored."""
        k, nonce, got = self._lookup(messages)
        if got is not None:
            return got
        reply = self.inner.complete(messages)
        self._store(k, nonce, reply)
        return reply

    async def acomplete(self, messages: Sequence[Any]) -> str:
        """Async :meth:`complete`."""
        k, nonce, got = self._lookup(messages)
        if got is not None:
            return got
        reply = await self.inner.acomplete(messages)
        self._store(k, nonce, reply)
        return reply


__all__ = ["RUBRIC_VERSION", "CachedModel", "JudgeCache", "model_identity", "prompt_hash"]
