"""Reading a judge's JSON reply: repair first, then a bounded number of re-asks, then an error.

Policy (DESIGN.md: a judge's unreadable reply is never read as a pass; seed 000 §3.3 asks
the judge for JSON): the judges' own requests carry a nonce (``fencing``) and their reply
is read only as one whole JSON object carrying it (one code fence around it is allowed), so
a verdict the judged trace planted and the judge quoted is never the verdict. A request of
the caller's own, without a nonce, is parsed as JSON; failing that it is repaired (code
fences stripped, then the first JSON object in the text extracted). A reply that still
does not parse, or parses but breaks the judge's expected shape, is re-asked at most
``retries`` times with the problem stated; after that :class:`~trajcheck.errors.JudgeError`
is raised, which the judges turn into a verdict with ``error`` set and ``passed`` None.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Generator, Sequence
from typing import Any

from ..errors import JudgeError
from .fencing import request_nonce
from .models import Message

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)

Validator = Callable[[dict[str, Any]], Any]
"""``validate(obj) -> value``: returns the judge's parsed value or raises JudgeError naming
the problem (sent back to the model on a re-ask)."""


def parse_json_reply(text: str, nonce: str | None = None) -> dict[str, Any]:
    """The JSON object in a judge reply.

    With ``nonce`` (the request's, ``fencing``): only the whole reply (or one code fence
    that is the whole reply) read as one JSON object whose ``"nonce"`` is ``nonce``; the key
    is dropped from the object returned. An object quoted inside prose (a verdict the trace
    planted), or one without the nonce, is not the judge's verdict.

    Without: tries, in order, the whole text; the contents of each fenced code block; the
    first ``{...}`` in the text that decodes as a JSON object (``json.JSONDecoder.
    raw_decode`` from each ``{``), for prompts of the caller's own.

    Args:
        text: the reply.
        nonce: the request's nonce, or None for a request without one.

    Returns:
        The reply's object (without its ``"nonce"`` key).

    Raises:
        JudgeError: no usable object (quoting the start of the reply); with ``nonce``, also
            prose or a second value around the object, a repeated key, or a missing or
            different nonce.
    """
    if not isinstance(text, str):
        raise JudgeError(f"judge reply is not text: {type(text).__name__}")
    if nonce is not None:
        return _whole_reply(text, nonce)
    candidates = [text.strip()] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    for c in candidates:
        try:
            obj = json.loads(c)
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    dec = json.JSONDecoder()
    for m in re.finditer(r"\{", text):
        try:
            obj, _ = dec.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    raise JudgeError(f"judge reply holds no JSON object: {text[:160]!r}")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for k, v in pairs:
        if k in seen:
            raise JudgeError(f"the reply object repeats the key {k!r}")
        seen[k] = v
    return seen


def _whole_reply(text: str, nonce: str) -> dict[str, Any]:
    body = text.strip()
    m = _FENCE.fullmatch(body)
    if m is not None:
        body = m.group(1).strip()
    try:
        obj = json.loads(body, object_pairs_hook=_no_duplicates)
    except ValueError:
        raise JudgeError("the reply is not one JSON object and nothing else: "
                         f"{text[:160]!r}") from None
    if not isinstance(obj, dict):
        raise JudgeError(f"the reply is JSON but not an object: {text[:160]!r}")
    if obj.get("nonce") != nonce:
        raise JudgeError(f'the reply object does not carry this request\'s "nonce": "{nonce}"')
    return {k: v for k, v in obj.items() if k != "nonce"}


def _reask(messages: Sequence[Message], reply: str, problem: str) -> list[dict[str, str]]:
    return [dict(m) for m in messages] + [
        {"role": "assistant", "content": reply},
        {"role": "user", "content": f"Your reply could not be used: {problem}. Reply again with "
                                    "only the JSON object in the required format."},
    ]


def _ask_steps(messages: Sequence[Message], validate: Validator, retries: int
               ) -> Generator[list[dict[str, str]], str, tuple[Any, str, int]]:
    """The ask / re-ask policy of :func:`ask_json` and :func:`aask_json`, without the model
    call: yields each message list to send, is sent the reply, and returns ``(validated
    value, reply, attempts)``; raises JudgeError for a bad ``retries`` or once the
    ``retries + 1`` replies are all unusable."""
    if not isinstance(retries, int) or retries < 0:
        raise JudgeError(f"retries must be an int >= 0, got {retries!r}")
    msgs = [dict(m) for m in messages]
    nonce = request_nonce(msgs)
    problem = ""
    reply = ""
    for attempt in range(retries + 1):
        reply = yield msgs
        try:
            return validate(parse_json_reply(reply, nonce)), reply, attempt + 1
        except JudgeError as e:
            problem = str(e)
        msgs = _reask(messages, reply, problem)
    raise JudgeError(f"judge reply unusable after {retries + 1} attempts: {problem}; "
                     f"last reply: {reply[:160]!r}")


def _called(fn: Any, msgs: Any) -> Any:
    try:
        return fn(msgs)
    except JudgeError:
        raise
    except Exception as e:  # a user's model raising anything is a judge error, not a crash
        owner = type(getattr(fn, "__self__", fn)).__name__
        raise JudgeError(f"judge model {owner}.complete raised {type(e).__name__}: {e}") from e


def ask_json(model: Any, messages: Sequence[Message], validate: Validator, *,
             retries: int = 2) -> tuple[Any, str, int]:
    """Ask ``model`` (a judge model) and return ``(validated value, raw reply, attempts)``.

    ``retries`` is the number of re-asks after the first reply (>= 0). Errors from the model
    itself (JudgeError from an HTTP adapter) are not re-asked here: the adapter already
    retried. Raises JudgeError naming the last problem and quoting the last reply.
    """
    steps = _ask_steps(messages, validate, retries)
    msgs = next(steps)
    while True:
        try:
            msgs = steps.send(_called(model.complete, msgs))
        except StopIteration as done:
            return done.value


async def aask_json(model: Any, messages: Sequence[Message], validate: Validator, *,
                    retries: int = 2) -> tuple[Any, str, int]:
    """Async :func:`ask_json` (``await model.acomplete``)."""
    steps = _ask_steps(messages, validate, retries)
    msgs = next(steps)
    while True:
        try:
            try:
                reply = await model.acomplete(msgs)
            except JudgeError:
                raise
            except Exception as e:  # a user's model raising anything is a judge error, not a crash
                raise JudgeError(f"judge model {type(model).__name__}.acomplete raised "
                                 f"{type(e).__name__}: {e}") from e
            msgs = steps.send(reply)
        except StopIteration as done:
            return done.value


def as_bool(v: Any, where: str, *, allow_na: bool = False) -> bool | None:
    """A verdict value as True/False (or None for n/a when ``allow_na``).

    Accepts JSON booleans and the strings pass/fail, yes/no, true/false, met/not met (any
    case); ``"n/a"``/``"na"``/null only when ``allow_na``. Raises JudgeError naming ``where``.
    """
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("pass", "passed", "yes", "true", "met"):
            return True
        if s in ("fail", "failed", "no", "false", "not met", "not_met"):
            return False
        if allow_na and s in ("n/a", "na", "not applicable"):
            return None
    if v is None and allow_na:
        return None
    allowed = "true/false" + (" or \"n/a\"" if allow_na else "")
    raise JudgeError(f"{where}: expected {allowed}, got {v!r}")
