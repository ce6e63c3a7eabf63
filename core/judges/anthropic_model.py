"""A judge model on Anthropic's Messages API through the official ``anthropic`` SDK."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import JudgeError
from .models import Message, _check_messages


@dataclass
class AnthropicModel:
    """An Anthropic model (``model``, e.g. ``claude-sonnet-4-5``) as a judge.

    ``api_key`` and ``base_url`` default to the SDK's own (``ANTHROPIC_API_KEY``,
    ``ANTHROPIC_BASE_URL``); ``max_tokens`` caps each reply; ``temperature`` (default 0) is
    sent; ``max_retries`` and ``timeout`` (seconds) go to the SDK client, which retries 408,
    409, 429 and 5xx itself. System messages become the ``system`` parameter; user and
    assistant turns are sent in order. The reply is its text blocks joined. ``usage`` adds up
    ``input_tokens``/``output_tokens``/``calls`` of this adapter's requests (the judge's own
    tokens, apart from the agent's). Any SDK error raises JudgeError naming the model.
    Needs ``anthropic`` (``pip install 'trajcheck[judges]'``).
    """

    model: str
    api_key: str | None = None
    base_url: str | None = None
    max_tokens: int = 1024
    temperature: float | None = 0.0
    max_retries: int = 2
    timeout: float = 60.0
    usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0,
                                                           "calls": 0}, compare=False)

    def with_seed(self, seed: int) -> None:
        """None: Anthropic's Messages API takes no sampling seed, so a simulated user on this
        adapter varies between seeds only through the prompt (``trajcheck.run.simulated_user``)."""
        return None

    def _kwargs(self, messages: Sequence[Message]) -> dict[str, Any]:
        msgs = _check_messages(messages)
        system = "\n\n".join(m["content"] for m in msgs if m["role"] == "system")
        turns = [{"role": m["role"], "content": m["content"]} for m in msgs if m["role"] != "system"]
        if not turns:
            raise JudgeError(f"AnthropicModel {self.model}: no user message to send")
        kw: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, "messages": turns}
        if system:
            kw["system"] = system
        if self.temperature is not None:
            kw["temperature"] = self.temperature
        return kw

    def _client_args(self) -> dict[str, Any]:
        return {"api_key": self.api_key, "base_url": self.base_url,
                "max_retries": self.max_retries, "timeout": self.timeout}

    def _text(self, resp: Any) -> str:
        u = getattr(resp, "usage", None)
        self.usage["calls"] += 1
        if u is not None:
            self.usage["input_tokens"] += int(getattr(u, "input_tokens", 0) or 0)
            self.usage["output_tokens"] += int(getattr(u, "output_tokens", 0) or 0)
        parts = [b.text for b in resp.content if getattr(b, "type", None) == "text"]
        if not parts:
            raise JudgeError(f"AnthropicModel {self.model}: reply has no text block")
        return "".join(parts)

    def complete(self, messages: Sequence[Message]) -> str:
        """Send the messages and return the reply text. Raises JudgeError on any failure."""
        try:
            import anthropic
        except ImportError as e:
            raise JudgeError("AnthropicModel needs the anthropic package: "
                             "pip install 'trajcheck[judges]'") from e
        kw = self._kwargs(messages)
        try:
            with anthropic.Anthropic(**self._client_args()) as client:
                return self._text(client.messages.create(**kw))
        except anthropic.AnthropicError as e:
            raise JudgeError(f"AnthropicModel {self.model}: {type(e).__name__}: {e}") from e

    async def acomplete(self, messages: Sequence[Message]) -> str:
        """Async :meth:`complete` (``anthropic.AsyncAnthropic``)."""
        try:
            import anthropic
        except ImportError as e:
            raise JudgeError("AnthropicModel needs the anthropic package: "
                             "pip install 'trajcheck[judges]'") from e
        kw = self._kwargs(messages)
        try:
            async with anthropic.AsyncAnthropic(**self._client_args()) as client:
                return self._text(await client.messages.create(**kw))
        except anthropic.AnthropicError as e:
            raise JudgeError(f"AnthropicModel {self.model}: {type(e).__name__}: {e}") from e


__all__ = ["AnthropicModel"]
