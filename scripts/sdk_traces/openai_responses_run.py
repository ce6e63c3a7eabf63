"""openai writes the trace: a Responses API tool loop (``client.responses.create``) chained by
``previous_response_id`` against a scripted API on 127.0.0.1, two conversations interleaved.

Artifacts (JSON Lines, one record per API call, as a logging wrapper around
``responses.create`` writes them):

- ``response_log.jsonl``: ``response.model_dump(mode="json")`` with the request's ``input``
  items (as the SDK sent them) under ``input`` -- the chain's calls, results, usage and answer;
- ``responses_only.jsonl``: ``response.model_dump(mode="json")`` alone: calls, usage and the
  answer (a response holds no tool output: results are unknown).

Run with its own venv (``make sdk-traces``, requirements/openai_responses.txt): openai==3.63.0.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import _scripted as S  # noqa: E402
import openai  # noqa: E402

TOOLS = {"get_weather": lambda a: S.WEATHER_OUT, "get_time": lambda a: S.TIME_OUT,
         "book_hotel": lambda a: S.book_hotel_impl(a["guest"], a["dates"])}
IDS = ["call_w1Rq", "call_t1Rq", "call_b1Rq", "call_b2Rq"]


def _fc(conv: str, cid: str, name: str, args: dict) -> dict:
    return {"type": "function_call", "id": f"fc_{conv}_{cid}", "call_id": cid, "name": name,
            "arguments": json.dumps(args, ensure_ascii=False), "status": "completed"}


def _response(conv: str, i: int, output: list[dict], usage: tuple[int, int]) -> dict:
    return {"id": f"resp_{conv}{i}", "object": "response", "created_at": 1765000000 + i, "status": "completed",
            "model": "gpt-4.1-2025-04-14", "output": output, "parallel_tool_calls": True,
            "previous_response_id": f"resp_{conv}{i - 1}" if i else None, "tool_choice": "auto", "tools": [],
            "temperature": 1.0, "top_p": 1.0, "error": None, "incomplete_details": None, "instructions": None,
            "metadata": {}, "text": {"format": {"type": "text"}}, "truncation": "disabled", "store": True,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1], "total_tokens": sum(usage),
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}


def _script(conv: str) -> list[dict]:
    return [
        _response(conv, 0, [_fc(conv, IDS[0], "get_weather", S.WEATHER_ARGS),
                            _fc(conv, IDS[1], "get_time", S.TIME_ARGS)], S.USAGE[0]),
        _response(conv, 1, [_fc(conv, IDS[2], "book_hotel", S.BOOK_FAIL_ARGS)], S.USAGE[1]),
        _response(conv, 2, [_fc(conv, IDS[3], "book_hotel", S.BOOK_OK_ARGS)], S.USAGE[2]),
        _response(conv, 3, [{"type": "message", "id": f"msg_{conv}3", "role": "assistant", "status": "completed",
                             "content": [{"type": "output_text", "text": S.FINAL, "annotations": []}]}], S.USAGE[3]),
    ]


def main() -> None:
    a, b = _script("a"), _script("b")
    srv = S.Scripted([r for pair in zip(a, b) for r in pair])  # the two conversations take turns
    log: list[dict[str, Any]] = []
    try:
        client = openai.OpenAI(api_key="test-key", base_url=srv.url + "/v1")
        tools = [{"type": "function", "name": n, "parameters": {"type": "object"}, "strict": False} for n in TOOLS]
        state = {c: {"prev": None, "input": [{"role": "user", "content": S.USER}], "done": False} for c in "ab"}
        while not all(s["done"] for s in state.values()):
            for c in "ab":
                s = state[c]
                if s["done"]:
                    continue
                kw: dict[str, Any] = {"model": "gpt-4.1", "input": s["input"], "tools": tools}
                if s["prev"] is not None:
                    kw["previous_response_id"] = s["prev"]
                resp = client.responses.create(**kw)
                sent = srv.requests[-1]
                assert sent.get("previous_response_id") == s["prev"], sent
                log.append({"input": sent["input"], **resp.model_dump(mode="json")})
                s["prev"], s["input"] = resp.id, []
                calls = [it for it in resp.output if it.type == "function_call"]
                if not calls:
                    s["done"] = True
                for fc in calls:
                    try:
                        out = TOOLS[fc.name](json.loads(fc.arguments))
                    except Exception as e:
                        out = f"Error: {e}"
                    s["input"].append({"type": "function_call_output", "call_id": fc.call_id, "output": out})
    finally:
        srv.close()
    assert [p for p in srv.paths] == ["/v1/responses"] * 8
    out = S.DATA / "openai_responses"
    out.mkdir(parents=True, exist_ok=True)
    with_input = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in log)
    only = "".join(json.dumps({k: v for k, v in r.items() if k != "input"}, ensure_ascii=False) + "\n" for r in log)
    (out / "response_log.jsonl").write_text(with_input, encoding="utf-8")
    (out / "responses_only.jsonl").write_text(only, encoding="utf-8")
    common = dict(ids=IDS, usage=S.USAGE, usage_note="each response's usage, summed over its chain")
    truth = S.truth("openai (responses.create, previous_response_id)", openai.__version__,
                    "one record per call: the response with the request's input items; two runs interleaved",
                    error_flags=[None] * 4,
                    extra={"runs": 2, "result_note": "function_call_output has no error field: the failure is "
                                                     "only the text 'Error: ...'", "error_text_prefix": "Error: "},
                    **common)
    (out / "response_log.truth.json").write_text(json.dumps(truth, ensure_ascii=False, indent=1) + "\n",
                                                 encoding="utf-8")
    truth_only = S.truth("openai (responses.create, previous_response_id)", openai.__version__,
                         "one record per call: the response alone; two runs interleaved",
                         error_flags=[None] * 4,
                         extra={"runs": 2, "results": [], "user_input": None,
                                "result_note": "a response holds neither the tool output nor the user input"},
                         **common)
    (out / "responses_only.truth.json").write_text(json.dumps(truth_only, ensure_ascii=False, indent=1) + "\n",
                                                   encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
