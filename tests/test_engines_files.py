"""A JSONL file cut into line-aligned byte ranges for engine tasks: every line read once,
in order, numbered increasingly, whatever the cut points and line endings."""

from __future__ import annotations

import random

import pytest

from trajcheck.engines import files


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
@pytest.mark.parametrize("final_newline", [True, False])
def test_ranges_read_every_line_once_in_order(tmp_path, newline, final_newline):
    rnd = random.Random(7)
    lines = [("x" * rnd.randint(0, 40) + f"é{i}").encode() for i in range(300)]
    lines[17] = b""  # a blank line is a line too
    lines[40] = b"\xff\xfe bad"  # not UTF-8: its decoding error in place of a text
    p = tmp_path / "runs.jsonl"
    p.write_bytes(newline.join(lines) + (newline if final_newline else b""))
    want = [x.decode() if i != 40 else "not UTF-8: invalid start byte at 0" for i, x in enumerate(lines)]
    for n in (1, 2, 3, 7, 64, 299, 300, 1000):
        cuts = files.ranges(p, n)
        assert cuts[0][0] == 0 and cuts[-1][1] == p.stat().st_size
        assert all(a < b for a, b in cuts) and all(x[1] == y[0] for x, y in zip(cuts, cuts[1:]))
        assert len(cuts) <= n
        got, seqs = [], []
        for i, (a, b) in enumerate(cuts):
            for s, t in files.read_range(p, a, b, i, batch_rows=16):
                assert len(s) == len(t) <= 16
                seqs += s
                got += [f"not UTF-8: {x.error.reason} at {x.error.start}" if isinstance(x, files.NotUtf8)
                        else x for x in t]
        assert got == want, n
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        # positions as Spark's monotonically_increasing_id: range index in the high bits
        assert seqs[0] == 0 and (seqs[-1] >> files.ROW_BITS) == len(cuts) - 1


def test_ranges_of_the_rest_of_a_file_start_where_asked(tmp_path):
    """Cut from a line start on (the case file's part the driver did not load): contiguous
    ranges from there to the end, each starting at a line start."""
    p = tmp_path / "f.jsonl"
    lines = [f'{{"n": {i}, "pad": "{"x" * (i % 37)}"}}\n' for i in range(500)]
    p.write_text("".join(lines))
    start = sum(len(x) for x in lines[:123])
    got = files.ranges(p, 3, start)
    assert len(got) == 3 and got[0][0] == start and got[-1][1] == p.stat().st_size
    assert all(b == c for (_, b), (c, _) in zip(got, got[1:]))
    raw = p.read_bytes()
    assert all(raw[a - 1:a] == b"\n" for a, _ in got)
    assert b"".join(raw[a:b] for a, b in got).decode().splitlines(keepends=True) == lines[123:]
