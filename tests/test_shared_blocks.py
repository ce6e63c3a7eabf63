"""Content blocks read in one place (read/traces/messages.py: block_call, block_result,
openai_calls): the anthropic, langchain and messages readers give the same calls and results
for the same Anthropic blocks, and openai_chat, langchain (additional_kwargs) and messages the
same calls for the same OpenAI tool_calls."""

from __future__ import annotations

from trajcheck.read.traces import anthropic, langchain, messages, openai_chat

CALLS = [
    {"type": "text", "text": "Ich schaue nach."},
    {"type": "tool_use", "id": "tu1", "name": "weather", "input": {"city": "Zürich", "opts": {"units": ["C", "K"]}}},
    {"type": "server_tool_use", "id": "srv1", "name": "web_search", "input": {"query": "Föhn"}},
]
RESULTS = [
    {"type": "tool_result", "tool_use_id": "tu1", "is_error": True, "content": [{"type": "text", "text": "timeout"}]},
    {"type": "web_search_tool_result", "tool_use_id": "srv1",
     "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}},
]
MIXED = {"type": "tool_result", "tool_use_id": "tu2", "content": [
    {"type": "text", "text": "Karte"}, {"type": "image", "source": {"type": "base64", "data": "AA=="}}]}
RETRY = {"type": "tool_use", "id": "tu2", "name": "weather", "input": {"city": "Zürich"}}


def _facts(t):
    calls = [(c.name, c.args, c.call_id, c.tool_type) for c in t.tool_calls()]
    results = [(r.call_id, r.name, r.output, r.is_error, r.error) for r in t.tool_results()]
    return calls, results


def test_anthropic_blocks_read_alike_by_three_readers() -> None:
    conv = [{"role": "user", "content": "Wetter?"},
            {"role": "assistant", "content": CALLS},
            {"role": "user", "content": RESULTS},
            {"role": "assistant", "content": [RETRY]},
            {"role": "user", "content": [MIXED]},
            {"role": "assistant", "content": "Fertig."}]
    lc = [{"type": "human" if m["role"] == "user" else "ai", "content": m["content"]} for m in conv]
    a, lg, m = anthropic.read(conv), langchain.read(lc), messages.read(conv)
    want_calls = [("weather", {"city": "Zürich", "opts": {"units": ["C", "K"]}}, "tu1", "function"),
                  ("web_search", {"query": "Föhn"}, "srv1", "server"),
                  ("weather", {"city": "Zürich"}, "tu2", "function")]
    want_results = [("tu1", "weather", "timeout", True, "timeout"),
                    ("srv1", "web_search", {"type": "web_search_tool_result_error",
                                            "error_code": "max_uses_exceeded"}, True, None),
                    ("tu2", "weather", [{"type": "text", "text": "Karte"},
                                        {"type": "image", "source": {"type": "base64", "data": "AA=="}}],
                     False, None)]
    assert _facts(a) == (want_calls, want_results)
    assert _facts(lg) == (want_calls, want_results)
    # the messages reader names results after reading (no name on the block): only the names differ
    mc, mr = _facts(m)
    assert mc == want_calls and [r[:1] + r[2:] for r in mr] == [r[:1] + r[2:] for r in want_results]
    assert a.final_response == lg.final_response == m.final_response == "Fertig."
    # a block with no name or no input: the same problems from every reader
    bad = [{"role": "assistant", "content": [{"type": "tool_use", "id": "x"}]}]
    want = ["messages[0].content[0]: field 'name' is missing",
            "messages[0].content[0] (): no 'input' recorded; arguments unknown"]
    assert anthropic.read(bad).metadata["problems"] == want
    assert langchain.read([{"type": "ai", "content": bad[0]["content"]}]).metadata["problems"] == want


def test_openai_tool_calls_read_alike_by_three_readers() -> None:
    tcs = [{"id": "c1", "type": "function", "function": {"name": "book", "arguments": '{"seat": "12A", "pax": [{"n": "Zoë"}]}'}},
           {"id": "c2", "type": "function", "function": {"name": "pay", "arguments": "{not json"}}]
    conv = [{"role": "user", "content": "buchen"}, {"role": "assistant", "content": None, "tool_calls": tcs}]
    o = openai_chat.read(conv)
    lc = langchain.read([{"type": "human", "content": "buchen"},
                         {"type": "ai", "content": "", "additional_kwargs": {"tool_calls": tcs}}])
    ms = messages.read(conv)
    want = [("book", {"seat": "12A", "pax": [{"n": "Zoë"}]}, "c1", "function"), ("pay", None, "c2", "function")]
    assert _facts(o)[0] == _facts(lc)[0] == _facts(ms)[0] == want
    assert [c.raw_args for c in o.tool_calls()] == [c.raw_args for c in lc.tool_calls()] == [
        '{"seat": "12A", "pax": [{"n": "Zoë"}]}', "{not json"]
