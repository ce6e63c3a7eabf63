"""Pluggable judge models: one small protocol and adapters for the models users already have.

A judge model turns a list of chat messages (``[{"role": "system"|"user"|"assistant",
"content": str}, ...]``) into the reply text. Every adapter has a sync ``complete(messages)``
and an async ``acomplete(messages)``; failures surface as :class:`~trajcheck.errors.JudgeError`
(never as a reply a judge could mistake for a verdict).

Adapters: :class:`OpenAICompatibleModel` (plain HTTP chat completions through httpx, the
``judges`` extra), :class:`LangChainModel` (any LangChain chat model), :class:`DeepEvalModel`
(a ``DeepEvalBaseLLM``), :class:`CallableModel` (any function) and :class:`ScriptedModel`
(the deterministic test double). :func:`as_model` picks the adapter for an object.
"""

from __future__ import annotations

import asyncio
import email.utils
import inspect
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from ..errors import JudgeError
from .fencing import echo_nonce

Message = Mapping[str, str]


@runtime_checkable
class JudgeModel(Protocol):
    """What a judge needs: ``complete(messages) -> str`` and ``acomplete(messages) -> str``.

    ``messages`` is a sequence of ``{"role": ..., "content": ...}`` dicts (OpenAI chat
    shape). Implementations raise JudgeError when the model cannot answer.
    """

    def complete(self, messages: Sequence[Message]) -> str: ...

    async def acomplete(self, messages: Sequence[Message]) -> str: ...


def _check_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise JudgeError("messages must be a list of {'role', 'content'} dicts, "
                         f"got {type(messages).__name__}")
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or "role" not in m or "content" not in m:
            raise JudgeError(f"message {i} must be a dict with 'role' and 'content', got {m!r}")
        out.append({"role": str(m["role"]), "content": str(m["content"])})
    return out


def messages_to_prompt(messages: Sequence[Message]) -> str:
    """One prompt string for single-prompt models (DeepEval): each message as
    ``ROLE:\\n<content>`` separated by blank lines."""
    return "\n\n".join(f"{m['role'].upper()}:\n{m['content']}" for m in _check_messages(messages))


def _text_of(content: Any) -> str:
    """Reply text from a str, a list of content blocks (``{"type": "text", "text": ...}``)
    or an object with ``.content``/``.text``."""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        parts = []
        for b in content:
            if isinstance(b, str):
                parts.append(b)
            elif isinstance(b, Mapping) and isinstance(b.get("text"), str):
                parts.append(b["text"])
        return "".join(parts)
    for attr in ("content", "text"):
        v = getattr(content, attr, None)
        if v is not None and v is not content:
            return _text_of(v)
    raise JudgeError(f"model reply has no text: {type(content).__name__}")


# --------------------------------------------------------------------------- OpenAI-compatible

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds (a float is accepted) or an
    HTTP date (RFC 9110 §10.2.3). None when absent or unreadable; never negative."""
    if value is None:
        return None
    v = value.strip()
    try:
        s = float(v)
        return max(0.0, s) if math.isfinite(s) else None
    except ValueError:
        pass
    try:
        dt = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError):
        return None
    if dt is None:
        return None
    return max(0.0, dt.timestamp() - (time.time() if now is None else now))


@dataclass(frozen=True)
class OpenAICompatibleModel:
    """A chat-completions endpoint (OpenAI, Azure-compatible gateways, vLLM, Ollama, LiteLLM...).

    ``base_url`` is the API root (``https://api.openai.com/v1``; ``/chat/completions`` is
    appended), ``api_key`` is sent as ``Authorization: Bearer`` (None sends none), ``model``
    the model name, ``timeout`` seconds per request, ``max_retries`` extra attempts after the
    first. ``temperature`` (default 0), ``seed`` (an int, sent as the request's ``seed``
    when set: OpenAI's best-effort reproducible sampling, also honoured by vLLM and Ollama's
    OpenAI API) and ``extra_body`` go into the request body; ``headers`` are added to every
    request. :meth:`with_seed` gives a copy with another seed (the simulated user's per-run
    seed, ``trajcheck.run.simulated_user``).

    Retry policy: a 408/409/429/5xx reply, a timeout or a connection error is retried up to
    ``max_retries`` times with exponential backoff ``backoff * 2**attempt`` seconds capped at
    ``max_backoff``; a ``Retry-After`` header, when present, is honoured instead (capped at
    ``max_retry_after``). Other 4xx replies are not retried. A reply that is not chat
    completions JSON (no ``choices[0].message.content``) raises JudgeError at once: the server
    answered, so retrying would not change it. Needs ``httpx`` (``pip install trajcheck[judges]``).

    ``usage`` adds up the judge's own ``input_tokens``/``output_tokens`` (the replies'
    ``usage.prompt_tokens``/``completion_tokens``), ``calls`` (replies received) and
    ``reported_cost_usd`` (the sum of ``usage.cost`` where the server reports one, else None).
    """

    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 60.0
    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 30.0
    max_retry_after: float = 120.0
    temperature: float | None = 0.0
    extra_body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    seed: int | None = None
    usage: dict[str, Any] = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0,
                                                           "calls": 0, "reported_cost_usd": None},
                                  compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.base_url, str) or not self.base_url.startswith(("http://", "https://")):
            raise JudgeError(f"OpenAICompatibleModel: base_url must be an http(s) URL, got {self.base_url!r}")
        # at construction, not at the first request: without httpx every judgement would fail
        # one by one and `eval --judge` would report "judge errors: N" and exit 0
        try:
            import httpx  # noqa: F401
        except ImportError as e:
            raise JudgeError("OpenAICompatibleModel needs httpx, which the judges extra installs: "
                             "pip install 'trajcheck[judges]'") from e
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise JudgeError(f"OpenAICompatibleModel: seed must be an int or None, got {self.seed!r}")
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise JudgeError(f"OpenAICompatibleModel: max_retries must be an int >= 0, got {self.max_retries!r}")
        if not (isinstance(self.timeout, (int, float)) and self.timeout > 0):
            raise JudgeError(f"OpenAICompatibleModel: timeout must be > 0 seconds, got {self.timeout!r}")

    def with_seed(self, seed: int) -> OpenAICompatibleModel:
        """A copy that sends ``seed`` in every request (chat completions' ``seed``)."""
        return replace(self, seed=seed)

    @property
    def url(self) -> str:
        """The chat completions URL."""
        return self.base_url.rstrip("/") + "/chat/completions"

    def _request(self, messages: Sequence[Message]) -> tuple[dict[str, Any], dict[str, str]]:
        body: dict[str, Any] = {"model": self.model, "messages": _check_messages(messages)}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.seed is not None:
            body["seed"] = self.seed
        body.update(self.extra_body)
        hdrs = {"Content-Type": "application/json", **self.headers}
        if self.api_key:
            hdrs["Authorization"] = f"Bearer {self.api_key}"
        return body, hdrs

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        ra = parse_retry_after(retry_after)
        if ra is not None:
            return min(ra, self.max_retry_after)
        return min(self.backoff * (2 ** attempt), self.max_backoff)

    def _parse(self, status: int, text: str) -> str:
        try:
            data = json.loads(text)
            content = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise JudgeError(f"{self.url}: malformed chat completions reply (HTTP {status}): "
                             f"{text[:200]!r}") from None
        if content is None:
            raise JudgeError(f"{self.url}: reply has no message content (HTTP {status})")
        self._count(data.get("usage") if isinstance(data, dict) else None)
        return _text_of(content)

    def _count(self, u: Any) -> None:
        """Add one reply's ``usage`` (``prompt_tokens``/``completion_tokens``; ``cost`` in USD
        when a gateway such as OpenRouter or LiteLLM reports it) to :attr:`usage`: the judge's
        own tokens, kept apart from the agent's."""
        self.usage["calls"] += 1
        if not isinstance(u, dict):
            return
        for ours, theirs in (("input_tokens", "prompt_tokens"), ("output_tokens", "completion_tokens")):
            v = u.get(theirs)
            if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                self.usage[ours] += v
        cost = u.get("cost")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0:
            self.usage["reported_cost_usd"] = (self.usage["reported_cost_usd"] or 0.0) + float(cost)

    def _outcome(self, resp: Any) -> tuple[str | None, str, str | None]:
        """(reply text, error, Retry-After header) for one HTTP response, shared by the sync
        and async loops. Text is None when the attempt failed but may be retried; a
        non-retryable status raises JudgeError at once."""
        if resp.status_code == 200:
            return self._parse(resp.status_code, resp.text), "", None
        err = f"HTTP {resp.status_code}: {resp.text[:200]!r}"
        if resp.status_code not in RETRY_STATUSES:
            raise JudgeError(f"{self.url}: {err}")
        return None, err, resp.headers.get("retry-after")

    def _transport_error(self, e: BaseException) -> str:
        """The ``last`` message for an httpx timeout or connection error (both retried)."""
        import httpx

        if isinstance(e, httpx.TimeoutException):
            return f"timed out after {self.timeout}s ({type(e).__name__})"
        return f"connection error: {type(e).__name__}: {e}"

    def _gave_up(self, last: str) -> JudgeError:
        return JudgeError(f"{self.url}: gave up after {self.max_retries + 1} attempts; last: {last}")

    def complete(self, messages: Sequence[Message]) -> str:
        """POST the messages and return the reply text (sync). Raises JudgeError after the
        retries are spent, on a non-retryable status, or on a malformed reply."""
        import httpx

        body, hdrs = self._request(messages)
        last = "no attempt"
        with httpx.Client(timeout=self.timeout) as client:
            for attempt in range(self.max_retries + 1):
                retry_after = None
                try:
                    resp = client.post(self.url, json=body, headers=hdrs)
                except httpx.TransportError as e:  # includes httpx.TimeoutException
                    last = self._transport_error(e)
                else:
                    text, last, retry_after = self._outcome(resp)
                    if text is not None:
                        return text
                if attempt < self.max_retries:
                    time.sleep(self._delay(attempt, retry_after))
        raise self._gave_up(last)

    async def acomplete(self, messages: Sequence[Message]) -> str:
        """Async ``complete`` (httpx.AsyncClient, ``asyncio.sleep`` between attempts)."""
        import httpx

        body, hdrs = self._request(messages)
        last = "no attempt"
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            for attempt in range(self.max_retries + 1):
                retry_after = None
                try:
                    resp = await client.post(self.url, json=body, headers=hdrs)
                except httpx.TransportError as e:  # includes httpx.TimeoutException
                    last = self._transport_error(e)
                else:
                    text, last, retry_after = self._outcome(resp)
                    if text is not None:
                        return text
                if attempt < self.max_retries:
                    await asyncio.sleep(self._delay(attempt, retry_after))
        raise self._gave_up(last)


# --------------------------------------------------------------------------- other adapters


def _wrap_error(where: str, e: BaseException) -> JudgeError:
    if isinstance(e, JudgeError):
        return e
    return JudgeError(f"{where} raised {type(e).__name__}: {e}")


@dataclass(frozen=True)
class LangChainModel:
    """A LangChain chat model (duck-typed: ``.invoke(messages)``, optionally ``.ainvoke``).

    Messages go in as ``(role, content)`` tuples, which every LangChain chat model accepts;
    the reply's ``.content`` (a string or a list of text blocks) is returned. Without
    ``ainvoke`` the async path runs ``invoke`` in a worker thread.
    """

    chat_model: Any

    def with_seed(self, seed: int) -> LangChainModel | None:
        """A copy whose chat model sends ``seed``, when the chat model declares a ``seed``
        field (``ChatOpenAI`` and other OpenAI-API models: ``model_copy(update={"seed":
        ...})``); None when it declares none (``ChatAnthropic``: the Messages API has no seed)."""
        fields = getattr(type(self.chat_model), "model_fields", None)
        if not isinstance(fields, Mapping) or "seed" not in fields:
            return None
        return LangChainModel(self.chat_model.model_copy(update={"seed": seed}))

    def complete(self, messages: Sequence[Message]) -> str:
        """``chat_model.invoke`` -> reply text; any exception becomes JudgeError."""
        msgs = [(m["role"], m["content"]) for m in _check_messages(messages)]
        try:
            return _text_of(self.chat_model.invoke(msgs))
        except Exception as e:
            raise _wrap_error("LangChain model", e) from e

    async def acomplete(self, messages: Sequence[Message]) -> str:
        """``await chat_model.ainvoke`` -> reply text."""
        msgs = [(m["role"], m["content"]) for m in _check_messages(messages)]
        try:
            if hasattr(self.chat_model, "ainvoke"):
                return _text_of(await self.chat_model.ainvoke(msgs))
            return _text_of(await asyncio.to_thread(self.chat_model.invoke, msgs))
        except Exception as e:
            raise _wrap_error("LangChain model", e) from e


def _deepeval_text(ret: Any) -> str:
    # DeepEvalBaseLLM.generate returns a str, or (str, cost) in native models.
    if isinstance(ret, tuple) and ret:
        ret = ret[0]
    return _text_of(ret)


# DeepEval model modules whose requests are OpenAI chat completions with generation_kwargs.
_DEEPEVAL_SEEDED = ("deepeval.models.llms.openai_model", "deepeval.models.llms.azure_model")


@dataclass(frozen=True)
class DeepEvalModel:
    """A DeepEval model object (duck-typed ``DeepEvalBaseLLM``: ``generate(prompt)`` and
    ``a_generate(prompt)``), given the messages as one prompt (:func:`messages_to_prompt`).
    A ``(text, cost)`` tuple reply is accepted."""

    model: Any

    def with_seed(self, seed: int) -> DeepEvalModel | None:
        """A copy whose model sends ``seed``, for DeepEval's OpenAI chat models
        (``GPTModel``/``OpenAIModel``, ``AzureOpenAIModel``, whose ``generation_kwargs`` go
        into every chat-completions request); None for the others (their APIs differ, and
        Anthropic's takes no seed)."""
        mod = type(self.model).__module__
        if mod not in _DEEPEVAL_SEEDED or not isinstance(getattr(self.model, "generation_kwargs", None), dict):
            return None
        import copy

        m = copy.copy(self.model)
        m.generation_kwargs = {**self.model.generation_kwargs, "seed": seed}
        return DeepEvalModel(m)

    def complete(self, messages: Sequence[Message]) -> str:
        """``model.generate(prompt)`` -> reply text; any exception becomes JudgeError."""
        prompt = messages_to_prompt(messages)
        try:
            return _deepeval_text(self.model.generate(prompt))
        except Exception as e:
            raise _wrap_error("DeepEval model", e) from e

    async def acomplete(self, messages: Sequence[Message]) -> str:
        """``await model.a_generate(prompt)`` (``generate`` in a thread when absent)."""
        prompt = messages_to_prompt(messages)
        try:
            if hasattr(self.model, "a_generate"):
                return _deepeval_text(await self.model.a_generate(prompt))
            return _deepeval_text(await asyncio.to_thread(self.model.generate, prompt))
        except Exception as e:
            raise _wrap_error("DeepEval model", e) from e


@dataclass(frozen=True)
class CallableModel:
    """Any function ``fn(messages) -> str`` (sync, or async returning an awaitable)."""

    fn: Callable[[list[dict[str, str]]], Any]

    def complete(self, messages: Sequence[Message]) -> str:
        """Call ``fn``; an awaitable result is run to completion. Exceptions -> JudgeError."""
        try:
            r = self.fn(_check_messages(messages))
            if inspect.isawaitable(r):
                r = asyncio.run(_await(r))
            return _text_of(r)
        except Exception as e:
            raise _wrap_error(f"judge function {getattr(self.fn, '__name__', self.fn)!r}", e) from e

    async def acomplete(self, messages: Sequence[Message]) -> str:
        """Await ``fn`` when async, else run it in a worker thread."""
        try:
            if inspect.iscoroutinefunction(self.fn):
                r = await self.fn(_check_messages(messages))
            else:
                r = await asyncio.to_thread(self.fn, _check_messages(messages))
                if inspect.isawaitable(r):
                    r = await r
            return _text_of(r)
        except Exception as e:
            raise _wrap_error(f"judge function {getattr(self.fn, '__name__', self.fn)!r}", e) from e


async def _await(x: Any) -> Any:
    return await x


class ScriptedModel:
    """The deterministic test double: replies from a script, records what it was asked.

    ``ScriptedModel(["reply 1", "reply 2"])`` returns the replies in order and raises
    JudgeError once they run out; ``ScriptedModel(fn)`` returns ``fn(messages)`` each time
    (``fn`` sees the full message list, so it can answer by content). ``calls`` lists the
    message lists received, in order. Not thread-safe by design: one script, one test.
    ``echo_nonce`` (default): a reply that is one JSON object without a ``"nonce"`` gets the
    request's (``fencing``), as a model following the reply format writes it; False sends
    every reply exactly as scripted (a reply that forgets or forges the nonce).
    """

    def __init__(self, replies: Sequence[str] | Callable[[list[dict[str, str]]], str], *,
                 echo_nonce: bool = True):
        self.echo_nonce = echo_nonce
        if callable(replies):
            self._fn: Callable[[list[dict[str, str]]], str] | None = replies
            self._replies: list[str] = []
        elif isinstance(replies, (str, bytes)) or not isinstance(replies, Sequence):
            raise JudgeError("ScriptedModel needs a list of replies or a function")
        else:
            self._fn = None
            self._replies = [str(r) for r in replies]
        self.calls: list[list[dict[str, str]]] = []

    @property
    def remaining(self) -> int:
        """Replies not yet used (0 for a function script)."""
        return max(0, len(self._replies) - len(self.calls)) if self._fn is None else 0

    def complete(self, messages: Sequence[Message]) -> str:
        """The next scripted reply. Raises JudgeError when the script is exhausted."""
        msgs = _check_messages(messages)
        self.calls.append(msgs)
        if self._fn is not None:
            return self._echo(msgs, str(self._fn(msgs)))
        i = len(self.calls) - 1
        if i >= len(self._replies):
            raise JudgeError(f"ScriptedModel: script exhausted after {len(self._replies)} replies")
        return self._echo(msgs, self._replies[i])

    def _echo(self, msgs: list[dict[str, str]], reply: str) -> str:
        return echo_nonce(msgs, reply) if self.echo_nonce else reply

    async def acomplete(self, messages: Sequence[Message]) -> str:
        """Same as ``complete``."""
        return self.complete(messages)


def seeded_model(model: Any, seed: int) -> tuple[Any, bool]:
    """``(adapter, True)`` where the adapter sends ``seed`` to the model's API, else
    ``(adapter, False)`` with the model unchanged.

    An adapter opts in with ``with_seed(seed)`` returning a seeded copy (or None when its API
    takes no seed): :class:`OpenAICompatibleModel` (the request's ``seed``), a LangChain chat
    model that declares a ``seed`` field (``ChatOpenAI``), DeepEval's OpenAI chat models
    (``generation_kwargs``), a :class:`~trajcheck.judges.CachedModel` around one of these.
    :class:`~trajcheck.judges.AnthropicModel` returns None: the Messages API has no seed.
    Functions and :class:`ScriptedModel` have no ``with_seed``. Used by simulated users so
    that each run's seed reaches the model (seed 000 §7.1: several seeds per scenario).
    """
    m = as_model(model)
    fn = getattr(m, "with_seed", None)
    if callable(fn):
        got = fn(seed)
        if got is not None:
            return got, True
    return m, False


def as_model(obj: Any) -> Any:
    """The judge-model adapter for ``obj``.

    An object with ``complete`` and ``acomplete`` is used as it is; one with ``invoke``
    (LangChain) gets :class:`LangChainModel`; one with ``generate`` and ``a_generate``
    (DeepEval) gets :class:`DeepEvalModel`; any other callable gets :class:`CallableModel`.
    Raises JudgeError for anything else (naming its type).
    """
    if hasattr(obj, "complete") and hasattr(obj, "acomplete"):
        return obj
    if hasattr(obj, "invoke"):
        return LangChainModel(obj)
    if hasattr(obj, "generate") and hasattr(obj, "a_generate"):
        return DeepEvalModel(obj)
    if callable(obj):
        return CallableModel(obj)
    raise JudgeError(f"cannot use a {type(obj).__name__} as a judge model: give an object with "
                     "complete/acomplete, a LangChain chat model, a DeepEval model or a callable")
