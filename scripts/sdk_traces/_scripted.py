"""Shared by the SDK trace producers: the scenario and a scripted model server on 127.0.0.1.

The scenario every producer plays (issue 28): a German request with non-ASCII text; turn 1 a
parallel pair (get_weather with nested arguments, get_time); turn 2 book_hotel fails; turn 3
the retry succeeds; turn 4 the final answer. Each turn has its own token usage.
``serve(replies)`` answers the i-th POST with ``replies[i]`` (a JSON body) and records each
request body; it never leaves 127.0.0.1.
"""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "sdk_traces"

USER = "Plane Zoës Reise nach Zürich: Wetter und Uhrzeit, dann buche das Hotel für zwei Nächte."
WEATHER_ARGS = {"city": "Zürich", "units": {"temp": "°C", "wind": ["km/h", "Bft"]}}
TIME_ARGS = {"tz": "Europe/Zurich"}
BOOK_FAIL_ARGS = {"guest": {"name": "Zoë Müller", "nights": 2}, "dates": ["2026-12-24", "2026-12-26"]}
BOOK_OK_ARGS = {"guest": {"name": "Zoë Müller", "nights": 2}, "dates": ["2026-12-27", "2026-12-29"]}
WEATHER_OUT = "3 °C, leichter Schneefall"
TIME_OUT = "14:05 MEZ"
BOOK_ERROR = "Kein Zimmer frei vom 24. bis 26. Dezember"
BOOK_OUT = "Gebucht: Hotel Storchen, Bestätigung ZÜ-4711"
FINAL = "Zürich: 3 °C, leichter Schneefall, 14:05 MEZ. Hotel Storchen ist für Zoë vom 27. bis 29. Dezember gebucht (ZÜ-4711)."
# (input, output) tokens of the four model calls
USAGE = [(120, 40), (190, 30), (240, 31), (300, 45)]


def book_hotel_impl(guest: dict[str, Any], dates: list[str]) -> str:
    """The scenario's booking tool: the first dates are full (raises), the second succeed."""
    if dates[0] == "2026-12-24":
        raise RuntimeError(BOOK_ERROR)
    return BOOK_OUT


def truth(sdk: str, version: str, artifact: str, *, ids: list[str | None], usage: list[tuple[int, int]] | None,
          usage_note: str, error_flags: list[bool | None], final: str | None = FINAL,
          extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The expected reading of an artifact, written from the scenario (not from trajcheck)."""
    calls = [("get_weather", WEATHER_ARGS), ("get_time", TIME_ARGS), ("book_hotel", BOOK_FAIL_ARGS),
             ("book_hotel", BOOK_OK_ARGS)]
    d = {
        "sdk": sdk, "version": version, "artifact": artifact, "user_input": USER,
        "calls": [{"name": n, "args": a, "call_id": i} for (n, a), i in zip(calls, ids)],
        "parallel_groups": [[0, 1], [2], [3]],
        "results": [{"call": 0, "output": WEATHER_OUT, "is_error": error_flags[0]},
                    {"call": 1, "output": TIME_OUT, "is_error": error_flags[1]},
                    {"call": 2, "output": BOOK_ERROR, "is_error": error_flags[2]},
                    {"call": 3, "output": BOOK_OUT, "is_error": error_flags[3]}],
        "final_response": final,
        "usage": None if usage is None else {"input_tokens": sum(i for i, _ in usage),
                                             "output_tokens": sum(o for _, o in usage)},
        "usage_note": usage_note,
    }
    if extra:
        d.update(extra)
    return d


def write(sdk: str, name: str, artifact: Any, truth_doc: dict[str, Any]) -> None:
    """Write ``tests/data/sdk_traces/<sdk>/<name>.json`` and its ``<name>.truth.json``."""
    out = DATA / sdk
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(artifact, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (out / f"{name}.truth.json").write_text(json.dumps(truth_doc, ensure_ascii=False, indent=1) + "\n",
                                            encoding="utf-8")
    print(f"wrote {out / name}.json")


class Scripted:
    """A scripted model: the i-th POST gets ``replies[i]``; ``requests`` holds the bodies."""

    def __init__(self, replies: list[Any], headers: dict[str, str] | None = None) -> None:
        self.replies = list(replies)
        self.requests: list[Any] = []
        self.paths: list[str] = []
        extra = headers or {}
        me = self

        class H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(n)
                me.paths.append(self.path)
                try:
                    me.requests.append(json.loads(body) if body else None)
                except ValueError:
                    me.requests.append(body.decode("utf-8", "replace"))
                i = len(me.requests) - 1
                data = json.dumps(me.replies[i] if i < len(me.replies) else {"error": "script ended"},
                                  ensure_ascii=False).encode()
                self.send_response(200 if i < len(me.replies) else 500)
                self.send_header("content-type", "application/json")
                for k, v in extra.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *a: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        """Stop the server."""
        self.server.shutdown()
        self.server.server_close()


def chat_completion_replies() -> list[dict[str, Any]]:
    """The scenario as the scripted model's four OpenAI chat completions (non-streaming), call ids
    ``call_w1``, ``call_t1`` (the parallel pair), ``call_b1``, ``call_b2``, each with its usage."""
    def reply(i: int, message: dict[str, Any], finish: str) -> dict[str, Any]:
        tin, tout = USAGE[i]
        return {"id": f"chatcmpl-{i}", "object": "chat.completion", "created": 1765000000 + i, "model": "gpt-4o-mini",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}}

    def call(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"id": cid, "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}

    def calls(*cs: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": None, "tool_calls": list(cs)}

    return [reply(0, calls(call("call_w1", "get_weather", WEATHER_ARGS), call("call_t1", "get_time", TIME_ARGS)),
                  "tool_calls"),
            reply(1, calls(call("call_b1", "book_hotel", BOOK_FAIL_ARGS)), "tool_calls"),
            reply(2, calls(call("call_b2", "book_hotel", BOOK_OK_ARGS)), "tool_calls"),
            reply(3, {"role": "assistant", "content": FINAL}, "stop")]


def _hex_ids(obj: object) -> object:
    """OTLP JSON wants hex trace/span ids; protobuf's JSON mapping writes bytes as base64."""
    if isinstance(obj, dict):
        return {k: (base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") and v else _hex_ids(v))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_hex_ids(v) for v in obj]
    return obj


def otlp_json(spans: Any) -> Any:
    """The finished spans of an OTel SDK exporter as an OTLP JSON ``TracesData`` document
    (hex ids), as a collector's file exporter writes it. Imports the OTLP encoder and
    protobuf only here: the producers that export no spans do not install them."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return _hex_ids(MessageToDict(encode_spans(spans)))
