"""trajcheck as a promptfoo Python provider: run your agent, hand promptfoo its whole trajectory.

Use it from a promptfoo config::

    providers:
      - id: file://path/to/promptfoo_provider/provider.py
        label: my-agent
        config:
          agent: agent.py:run          # "file.py:callable" (relative to the config) or "package.module:callable"
          # format: openai_chat        # optional: force the trace reader for what the agent returns
          # otlp_endpoint: http://127.0.0.1:4318/v1/traces   (another host needs allow_remote_otlp: true)

The agent callable is called as ``agent(prompt)``, plus the keyword arguments it declares among
``vars`` (the test's vars), ``config`` (this provider config) and ``context`` (promptfoo's call
context). It may return a ``trajcheck.Trajectory``, a serialized one (``Trajectory.to_dict()``),
or anything a trajcheck trace reader understands (OpenAI/Anthropic messages, a ``{name, args}``
list, ...). This file only translates; it scores nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import secrets
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

try:  # imported as trajcheck.promptfoo.provider (installed package, tests, library use)
    from ._read import InputProblem, read_output
except ImportError:  # loaded by path by promptfoo, whose wrapper puts this directory on sys.path
    from _read import InputProblem, read_output  # type: ignore[no-redef]

DEFAULT_OTLP_ENDPOINT = "http://127.0.0.1:4318/v1/traces"
AGENT_KWARGS = ("vars", "config", "context")
#: The provider's own config keys, and the ones promptfoo itself puts in (or reads from) it.
CONFIG_KEYS = ("agent", "format", "otlp_endpoint", "send_spans", "allow_remote_otlp", "error_pattern",
               "output")
PROMPTFOO_CONFIG_KEYS = ("basePath", "pythonExecutable", "workers", "timeout")
OUTPUT_FORMS = ("message", "text")


def check_config(config: Mapping[str, Any]) -> None:
    """Raise ``InputProblem`` for an unknown provider config key (naming the closest known
    one) or a wrong-typed value."""
    from trajcheck.model import did_you_mean

    known = CONFIG_KEYS + PROMPTFOO_CONFIG_KEYS
    for k in config:
        if k not in known:
            raise InputProblem(f"unknown provider config key {k!r}{did_you_mean(str(k), known)}; "
                               f"known: {', '.join(CONFIG_KEYS)}")
    for k in ("agent", "format", "otlp_endpoint", "error_pattern", "output"):
        v = config.get(k)
        if v is not None and not isinstance(v, str):
            raise InputProblem(f"provider config {k!r} must be a string, got {type(v).__name__} {v!r}")
    for flag in ("send_spans", "allow_remote_otlp"):
        if config.get(flag) is not None and not isinstance(config[flag], bool):
            raise InputProblem(f"provider config {flag!r} must be true or false, got {config[flag]!r}")
    if config.get("output") is not None and config["output"] not in OUTPUT_FORMS:
        raise InputProblem(f"provider config 'output' must be one of {', '.join(OUTPUT_FORMS)}, "
                           f"got {config['output']!r}")
    if not config.get("agent"):
        raise InputProblem("provider config needs 'agent' (file.py:callable or package.module:callable)")


def load_agent(spec: str, base_path: str | None = None) -> Callable[..., Any]:
    """Resolve ``"module:callable"`` to the callable.

    ``module`` is a file path when it ends in ``.py`` or contains a path separator (relative
    paths are taken from ``base_path``, promptfoo's config directory, else the working
    directory; the file's folder is put on ``sys.path`` so it can import its sibling modules),
    otherwise an importable module name (``base_path`` is put on ``sys.path`` for it). ``callable`` (required) may be dotted
    (``Class.method``). Raises ``trajcheck.errors.AgentError`` naming the spec when the
    module cannot be found or imported or the attribute is missing or not callable.
    """
    from trajcheck.errors import AgentError

    if not isinstance(spec, str) or ":" not in spec.rstrip(":"):
        raise AgentError(f"provider config 'agent' must be 'module:callable' or 'file.py:callable', got {spec!r}")
    mod_part, _, attr = spec.rpartition(":")
    try:
        if mod_part.endswith(".py") or "/" in mod_part or os.sep in mod_part:
            path = mod_part if os.path.isabs(mod_part) else os.path.join(base_path or os.getcwd(), mod_part)
            path = os.path.abspath(path)
            if not os.path.isfile(path):
                raise AgentError(f"agent {spec!r}: file {path} does not exist")
            folder = os.path.dirname(path)
            if folder not in sys.path:  # the agent's own sibling modules must import
                sys.path.insert(0, folder)
            name = "trajcheck_agent_" + os.path.splitext(os.path.basename(path))[0]
            mspec = importlib.util.spec_from_file_location(name, path)
            if mspec is None or mspec.loader is None:
                raise AgentError(f"agent {spec!r}: cannot load {path} as a Python module")
            module = importlib.util.module_from_spec(mspec)
            mspec.loader.exec_module(module)
        else:
            if base_path and base_path not in sys.path:
                sys.path.insert(0, base_path)
            module = importlib.import_module(mod_part)
    except AgentError:
        raise
    except ModuleNotFoundError as e:
        raise AgentError(f"agent {spec!r}: importing {mod_part!r} failed: {type(e).__name__}: {e} "
                         f"(sys.path starts {sys.path[:3]}; install the package, or keep the module "
                         "next to the agent file or the promptfoo config)") from e
    except Exception as e:
        raise AgentError(f"agent {spec!r}: importing {mod_part!r} failed: {type(e).__name__}: {e}") from e
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise AgentError(f"agent {spec!r}: {mod_part!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise AgentError(f"agent {spec!r}: {attr!r} is not callable")
    return obj  # type: ignore[no-any-return]


def _call_agent(agent: Callable[..., Any], prompt: str, extra: Mapping[str, Any]) -> Any:
    try:
        params = inspect.signature(agent).parameters
    except (TypeError, ValueError):
        params = {}  # type: ignore[assignment]
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kwargs = {k: v for k, v in extra.items() if var_kw or k in params}
    return agent(prompt, **kwargs)


def token_usage(traj: Any) -> dict[str, int]:
    """``Trajectory.total_usage`` in promptfoo's ``tokenUsage`` shape (empty when unknown)."""
    u = traj.total_usage
    if u is None:
        return {}
    out: dict[str, int] = {"numRequests": 1}
    for key, val in (("prompt", u.input_tokens), ("completion", u.output_tokens), ("total", u.total),
                     ("cached", u.cache_read_tokens)):
        if val is not None:
            out[key] = int(val)
    return out


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": value if isinstance(value, str) else json.dumps(value, default=str)}}


def tool_spans(traj: Any, traceparent: str, *, now_ns: int | None = None) -> dict[str, Any]:
    """OTLP/JSON (``ExportTraceServiceRequest``) with one span per tool call of ``traj``.

    ``traceparent`` is W3C ``00-<32 hex trace id>-<16 hex parent span id>-<flags>`` as promptfoo
    passes it in ``context["traceparent"]``; every span joins that trace as a child of that span.
    Attributes: ``tool.name``, ``tool.arguments`` (JSON text), ``gen_ai.tool.name``,
    ``gen_ai.tool.call.id``, ``gen_ai.operation.name`` = execute_tool -- the keys promptfoo's
    ``trajectory:*`` assertions read (notes §3.E). Span times: the step's recorded start/end when
    known, else consecutive 1 ms slots from ``now_ns`` in call order, so that promptfoo's
    ordering by start time is the trajectory's call order. A failed result sets status ERROR.
    Raises ``ValueError`` for a malformed traceparent.
    """
    parts = traceparent.split("-")
    if len(parts) < 3 or len(parts[1]) != 32 or len(parts[2]) != 16:
        raise ValueError(f"malformed traceparent {traceparent!r}")
    trace_id, parent_id = parts[1], parts[2]
    base = time.time_ns() if now_ns is None else now_ns
    results = {id(c): r for c, r in traj.pairs()}
    spans = []
    k = 0
    for step in traj.steps:
        for call in step.tool_calls:
            if step.start_time is not None and step.end_time is not None:
                start, end = int(step.start_time * 1e9) + k, int(step.end_time * 1e9) + k
            else:
                start, end = base + k * 1_000_000, base + k * 1_000_000 + 500_000
            res = results.get(id(call))
            error = None if res is None else (res.error or ("tool error" if res.is_error else None))
            attrs = [_attr("tool.name", call.name),
                     _attr("tool.arguments", call.args if call.args is not None else (call.raw_args or "")),
                     _attr("gen_ai.tool.name", call.name),
                     _attr("gen_ai.operation.name", "execute_tool")]
            if call.call_id:
                attrs.append(_attr("gen_ai.tool.call.id", call.call_id))
            spans.append({"traceId": trace_id, "spanId": secrets.token_hex(8), "parentSpanId": parent_id,
                          "name": f"execute_tool {call.name}", "kind": 1,
                          "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
                          "attributes": attrs,
                          "status": {"code": 2, "message": str(error)} if error else {"code": 1}})
            k += 1
    return {"resourceSpans": [{
        "resource": {"attributes": [_attr("service.name", "trajcheck-promptfoo-provider")]},
        "scopeSpans": [{"scope": {"name": "trajcheck"}, "spans": spans}]}]}


def endpoint_refusal(endpoint: str, allow_remote: bool = False) -> str | None:
    """Why the spans may not be sent to ``endpoint``, or None when they may.

    Spans carry every tool call's arguments and output, so they go only where the user
    clearly meant them to: an ``http``/``https`` URL (no ``file:`` or other schemes) whose
    host is this machine (``localhost``, 127.0.0.0/8, ``::1``) -- promptfoo's own receiver --
    unless the provider config says ``allow_remote_otlp: true``.
    """
    from urllib.parse import urlsplit

    from trajcheck.report.otel_events import is_loopback_url

    try:
        u = urlsplit(endpoint)
        host = u.hostname or ""
    except ValueError as e:
        return f"not a URL ({e})"
    if u.scheme not in ("http", "https") or not host:
        return "only http(s) URLs are used"
    if allow_remote or is_loopback_url(endpoint):
        return None
    return (f"{host} is not this machine; spans (tool arguments and outputs) go to another host only "
            "with allow_remote_otlp: true in the provider config")


class _NoRedirect:
    """A urllib handler that refuses redirects, so a POST never lands on another host."""

    def __new__(cls) -> Any:
        import urllib.request

        class H(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args: Any, **kw: Any) -> None:
                return None

        return H()


def post_spans(payload: Mapping[str, Any], endpoint: str, *, timeout: float = 30.0,
               allow_remote: bool = False) -> int:
    """POST an OTLP/JSON payload to ``endpoint`` (redirects not followed); returns the HTTP
    status. ``timeout`` in seconds: promptfoo's receiver shares one Node event loop with the
    whole eval, which on a busy machine answered after more than 5 s. Raises ``OSError`` on failure, ``PermissionError`` (an ``OSError``) when
    ``endpoint_refusal`` refuses the endpoint."""
    import urllib.request

    from trajcheck.report.otel_events import is_loopback_url

    why = endpoint_refusal(endpoint, allow_remote)
    if why is not None:
        raise PermissionError(f"not sent to {endpoint}: {why}")
    req = urllib.request.Request(endpoint, data=json.dumps(payload).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    handlers: list[Any] = [_NoRedirect()]
    if is_loopback_url(endpoint):
        # promptfoo's receiver on this machine: http_proxy would hand it every span.
        handlers.append(urllib.request.ProxyHandler({}))
    opener = urllib.request.build_opener(*handlers)
    with opener.open(req, timeout=timeout) as resp:
        return int(resp.status)


def _endpoint(config: Mapping[str, Any]) -> str:
    ep = config.get("otlp_endpoint")
    if isinstance(ep, str) and ep:
        return ep
    env = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if env:
        return env
    env = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if env:
        return env.rstrip("/") + "/v1/traces"
    return DEFAULT_OTLP_ENDPOINT


def assistant_message(traj: Any) -> dict[str, Any]:
    """The run as one OpenAI Chat assistant message: ``{"role": "assistant", "content": <final
    response>, "tool_calls": [{"id", "type": "function", "function": {"name", "arguments":
    <JSON text>}}]}`` -- the shape promptfoo's own ``tool-call-f1`` and
    ``is-valid-openai-tools-call`` assertions read (research notes promptfoo.md §3.B-C);
    ``tool_calls`` is ``[]`` for a run without calls."""
    calls = []
    for i, c in enumerate(traj.tool_calls()):
        args = json.dumps(c.args) if c.args is not None else (c.raw_args or "")
        calls.append({"id": c.call_id or f"call_{i}", "type": "function",
                      "function": {"name": c.name, "arguments": args}})
    # tool_calls always present (an empty list for a run without calls), so a promptfoo
    # check such as output.tool_calls.length === 0 works on every run
    return {"role": "assistant", "content": traj.final_response or "", "tool_calls": calls}


def call_api(prompt: str, options: Mapping[str, Any], context: Mapping[str, Any]) -> dict[str, Any]:
    """promptfoo entry point: run the configured agent on ``prompt`` and return its run.

    Args:
        prompt: the rendered prompt.
        options: ``{"id", "config": {agent, format?, otlp_endpoint?, send_spans?,
            allow_remote_otlp?, error_pattern?, output?, basePath}}``; an unknown config key (the closest known one is named) or a
            wrong type is an error.
        context: promptfoo's call context (``vars``, ``test``, and ``traceparent`` when tracing).

    Returns (promptfoo ``ProviderResponse``): ``output`` = the run as one OpenAI assistant
    message with its ``tool_calls`` (:func:`assistant_message`, so promptfoo's own
    ``tool-call-f1`` and ``is-valid-openai-tools-call`` read the calls), or with
    ``output: text`` the final response text; ``error_pattern`` (a regex) marks tool results
    whose text matches as failed (``traces.apply_error_pattern``); ``metadata`` = ``{"trajectory":
    Trajectory.to_dict(), "toolCalls": [{id, name, input, output?, is_error?}], "source_format",
    "spans"?}``; ``tokenUsage`` (promptfoo's keys), ``cost`` (USD, when known) and ``latencyMs``
    (measured wall time of the agent call). When ``context`` carries a ``traceparent`` (promptfoo
    tracing on) and ``send_spans`` is not false, the tool calls are POSTed as OTLP/JSON spans to
    ``otlp_endpoint`` (default ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``OTEL_EXPORTER_OTLP_ENDPOINT``
    + /v1/traces, else http://127.0.0.1:4318/v1/traces, promptfoo's receiver default) so that
    promptfoo's built-in ``trajectory:*`` assertions see them; a failed POST is recorded in
    ``metadata.spans`` and does not fail the call. Spans go only to this machine unless the
    config has ``allow_remote_otlp: true`` (``endpoint_refusal``); a refused endpoint is
    recorded in ``metadata.spans`` and nothing is sent.

    Errors: a bad config, an agent that cannot be loaded or raises, or a return value no reader
    understands gives ``{"error": ...}`` (promptfoo marks the test ERROR) with the cause named.
    """
    config = dict((options or {}).get("config") or {})
    context = context or {}
    try:
        from trajcheck.errors import TrajcheckError
        from trajcheck.model import Trajectory
    except ImportError:
        return {"error": f"trajcheck provider: {sys.executable} cannot import trajcheck; install it or "
                         "set PROMPTFOO_PYTHON to the python of the virtual environment that has it"}
    try:
        check_config(config)
        agent = load_agent(config.get("agent"), config.get("basePath"))  # type: ignore[arg-type]
        extra = {"vars": dict(context.get("vars") or {}), "config": config, "context": context}
        t0 = time.perf_counter()
        try:
            ret = _call_agent(agent, prompt, extra)
        except Exception as e:
            return {"error": f"trajcheck provider: agent {config.get('agent')!r} raised "
                             f"{type(e).__name__}: {e}"}
        latency_ms = (time.perf_counter() - t0) * 1000.0
        if isinstance(ret, Trajectory):
            traj, how = ret, "trajectory"
        else:
            try:
                traj, how = read_output(ret, config.get("format"))
            except InputProblem as e:
                raise InputProblem(f"the return value of agent {config.get('agent')!r}: {e}") from e
        if config.get("error_pattern"):
            from trajcheck.read.traces import apply_error_pattern

            traj = apply_error_pattern(traj, config["error_pattern"])
    except InputProblem as e:
        return {"error": f"trajcheck provider: {e}"}
    except TrajcheckError as e:
        return {"error": f"trajcheck provider: {e}"}
    tool_calls = []
    for call, res in traj.pairs():
        tc: dict[str, Any] = {"id": call.call_id, "name": call.name,
                              "input": call.args if call.args is not None else call.raw_args}
        if res is not None:
            tc["output"] = res.output
            if res.is_error is not None:
                tc["is_error"] = res.is_error
        tool_calls.append(tc)
    metadata: dict[str, Any] = {"trajectory": traj.to_dict(), "toolCalls": tool_calls, "source_format": how}
    traceparent = context.get("traceparent")
    if isinstance(traceparent, str) and traceparent and config.get("send_spans", True) is not False:
        endpoint = _endpoint(config)
        try:
            payload = tool_spans(traj, traceparent)
            status = post_spans(payload, endpoint, allow_remote=config.get("allow_remote_otlp") is True)
            metadata["spans"] = {"endpoint": endpoint, "sent": len(payload["resourceSpans"][0]["scopeSpans"][0]["spans"]),
                                 "status": status}
        except (OSError, ValueError) as e:
            metadata["spans"] = {"endpoint": endpoint, "sent": 0, "error": f"{type(e).__name__}: {e}"}
    text = traj.final_response or ""
    out: dict[str, Any] = {"output": text if config.get("output") == "text" else assistant_message(traj),
                           "metadata": metadata, "latencyMs": round(latency_ms, 3)}
    usage = token_usage(traj)
    if usage:
        out["tokenUsage"] = usage
    if traj.total_cost_usd is not None:
        out["cost"] = traj.total_cost_usd
    return out
