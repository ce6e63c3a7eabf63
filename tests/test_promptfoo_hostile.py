"""promptfoo files on hostile input: spans only to this machine unless opted in, redirects not
followed, and get_assert returning a failed result -- never raising -- whatever it is given."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

try:
    import promptfoo_provider  # noqa: F401
except ImportError:  # pytest run without the repository root on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from promptfoo_provider.assertion import get_assert
from promptfoo_provider.provider import call_api, endpoint_refusal

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "promptfoo"
TRACEPARENT = "00-" + "ab" * 16 + "-" + "cd" * 8 + "-01"


def _opts(**config: Any) -> dict[str, Any]:
    return {"id": "file://provider.py", "config": {"agent": "agent.py:run", "basePath": str(EXAMPLE), **config}}


@pytest.mark.parametrize(("endpoint", "allow", "refused"), [
    ("http://127.0.0.1:4318/v1/traces", False, None),
    ("http://localhost:4318/v1/traces", False, None),
    ("http://[::1]:4318/v1/traces", False, None),
    ("https://collector.example.com/v1/traces", False, "collector.example.com is not this machine"),
    ("http://10.0.0.5:4318/v1/traces", False, "10.0.0.5 is not this machine"),
    ("https://collector.example.com/v1/traces", True, None),
    ("file:///etc/passwd", False, "only http(s) URLs are used"),
    ("file:///etc/passwd", True, "only http(s) URLs are used"),
])
def test_endpoint_policy(endpoint: str, allow: bool, refused: str | None) -> None:
    why = endpoint_refusal(endpoint, allow)
    assert (why is None) if refused is None else (why is not None and why.startswith(refused))


def test_remote_endpoint_gets_nothing_without_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    import urllib.request

    def boom(*a: Any, **k: Any) -> Any:
        raise AssertionError("no request may be made")

    monkeypatch.setattr(urllib.request.OpenerDirector, "open", boom)
    r = call_api("Cancel booking B42", _opts(otlp_endpoint="https://collector.example.com/v1/traces"),
                 {"traceparent": TRACEPARENT})
    spans = r["metadata"]["spans"]
    assert spans["sent"] == 0 and "not this machine" in spans["error"] and "allow_remote_otlp" in spans["error"]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector.example.com")
    r = call_api("Cancel booking B42", _opts(), {"traceparent": TRACEPARENT})
    assert r["metadata"]["spans"]["sent"] == 0


def test_redirect_to_another_host_is_not_followed() -> None:
    hits: list[str] = []

    class H(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            hits.append(self.path)
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(307)
            self.send_header("Location", "http://collector.example.com/steal")
            self.end_headers()

        def log_message(self, *a: Any) -> None:
            pass

    srv = HTTPServer(("127.0.0.1", 0), H)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        ep = f"http://127.0.0.1:{srv.server_address[1]}/v1/traces"
        r = call_api("Cancel booking B42", _opts(otlp_endpoint=ep), {"traceparent": TRACEPARENT})
    finally:
        srv.shutdown()
    assert hits == ["/v1/traces"]
    assert r["metadata"]["spans"]["sent"] == 0 and "307" in r["metadata"]["spans"]["error"]


def test_spans_to_this_machine_skip_the_environment_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, list[str]] = {"collector": [], "proxy": []}

    def server(name: str) -> HTTPServer:
        class H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                seen[name].append(self.path)
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *a: Any) -> None:
                pass

        srv = HTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        return srv

    collector, proxy = server("collector"), server("proxy")
    for var in ("http_proxy", "HTTP_PROXY"):
        monkeypatch.setenv(var, f"http://127.0.0.1:{proxy.server_address[1]}")
    for var in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)
    try:
        ep = f"http://127.0.0.1:{collector.server_address[1]}/v1/traces"
        r = call_api("Cancel booking B42", _opts(otlp_endpoint=ep), {"traceparent": TRACEPARENT})
    finally:
        collector.shutdown()
        proxy.shutdown()
    assert r["metadata"]["spans"]["sent"] > 0
    assert seen == {"collector": ["/v1/traces"], "proxy": []}


def test_allow_remote_otlp_is_a_known_boolean_key(monkeypatch: pytest.MonkeyPatch) -> None:
    import urllib.request

    posted: list[str] = []

    def fake_open(self: Any, req: Any, timeout: float = 0) -> Any:
        posted.append(req.full_url)
        raise OSError("no network in tests")

    monkeypatch.setattr(urllib.request.OpenerDirector, "open", fake_open)
    ep = "https://collector.example.com/v1/traces"
    r = call_api("Cancel booking B42", _opts(otlp_endpoint=ep, allow_remote_otlp=True), {"traceparent": TRACEPARENT})
    assert "error" not in r and posted == [ep]  # accepted and tried; the fake network refused it
    assert "no network in tests" in r["metadata"]["spans"]["error"]
    r = call_api("Cancel booking B42", _opts(otlp_endpoint=ep, allow_remote_otlp="yes"), {})
    assert "'allow_remote_otlp' must be true or false" in r["error"]
    r = call_api("Cancel booking B42", _opts(allow_remote_otlps=True), {})
    assert "did you mean 'allow_remote_otlp'" in r["error"]


def _deep(n: int) -> Any:
    v: Any = 1
    for _ in range(n):
        v = [v]
    return v


BAD_OUTPUTS = [None, 10 ** 400, float("nan"), _deep(5000), "[" * 5000, {"role": "assistant", "tool_calls": 5},
               "\ud800", [{"name": "x", "args": {"a": 10 ** 400}}]]
BAD_CONFIGS = [{"expected_calls": [{"name": "x", "args": {"a": _deep(3000)}}]},
               {"expected_calls": [{"name": "x", "match": {"a": {"type": "schema", "schema": {"type": 5}}}}]},
               {"expected_calls": [{"name": "x", "match": {"a": {"type": "schema",
                                                                 "schema": {"$ref": "http://127.0.0.1:9/s"}}}}]},
               {"expected_calls": "x", "threshold": float("nan")}, {"metric": {"a": 1}}, {"max_steps": 10 ** 400}]


@pytest.mark.parametrize("output", BAD_OUTPUTS, ids=range(len(BAD_OUTPUTS)))
@pytest.mark.parametrize("config", BAD_CONFIGS, ids=range(len(BAD_CONFIGS)))
def test_get_assert_never_raises(output: Any, config: dict[str, Any]) -> None:
    r = get_assert(output, {"config": config, "vars": {}})
    assert r["pass"] is False and r["score"] == 0 and isinstance(r["reason"], str) and r["reason"]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          database=None)
@given(output=st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                           lambda c: st.lists(c, max_size=4) | st.dictionaries(
                               st.sampled_from(["role", "content", "name", "args", "tool_calls", "type",
                                                "function", "arguments", "id", "input"]), c, max_size=4),
                           max_leaves=20),
       config=st.dictionaries(st.sampled_from(["expected_calls", "metric", "threshold", "mode", "max_steps",
                                               "forbidden_calls", "args_mode", "source"]),
                              st.none() | st.integers() | st.floats() | st.text(max_size=8)
                              | st.lists(st.text(max_size=5), max_size=3), max_size=4))
def test_get_assert_fuzzed_returns_a_result(output: Any, config: dict[str, Any]) -> None:
    r = get_assert(output, {"config": config, "vars": {}})
    assert set(r) >= {"pass", "score", "reason"}
    json.dumps(r, default=str)
