"""Hostile-input costs as ratios (README "Security model"): the OpenAI chat call/result join
must grow linearly with the number of messages, and the pathological inputs of the audit
(a backtracking regex, a YAML alias bomb) must be refused or matched in bounded time.

Run: ``.venv/bin/python bench/hostile.py``. Prints seconds and the ratio of the 100k-message
read to 10 times the 10k-message read (about 1 when linear; the quadratic join gave ~6.5).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from trajcheck.errors import DatasetError
from trajcheck.match.matchers import get_matcher
from trajcheck.read.dataset import load_cases_report
from trajcheck.read.traces import read


def _chat(n: int) -> list[dict]:
    out: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(n // 2):
        out.append({"role": "assistant", "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
        out.append({"role": "tool", "tool_call_id": f"c{i}", "content": "ok"})
    return out


def _time(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    small, big = _chat(10_000), _chat(100_000)
    t10 = min(_time(lambda: read(small)) for _ in range(3))
    t100 = min(_time(lambda: read(big)) for _ in range(2))
    print(f"openai_chat read: 10k messages {t10:.2f} s, 100k {t100:.2f} s, "
          f"ratio to linear {t100 / (10 * t10):.2f}")
    m = get_matcher("regex")
    print(f"regex (a+)+$ on 100,000 characters: {_time(lambda: m('(a+)+$', 'a' * 100_000 + 'b')):.4f} s")
    bomb = "\n".join(['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
                      *[f"{x}: &{x} [{','.join([f'*{p}'] * 9)}]" for p, x in zip("abcdefg", "bcdefgh")],
                      "cases: [*h,*h,*h,*h,*h,*h,*h,*h,*h]"])
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "bomb.yaml"
        p.write_text(bomb)
        t0 = time.perf_counter()
        try:
            load_cases_report(p)
        except DatasetError:
            pass
        print(f"YAML alias bomb ({len(bomb)} bytes, 10^9 nodes) refused in {time.perf_counter() - t0:.3f} s")


if __name__ == "__main__":
    main()
