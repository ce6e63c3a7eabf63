"""docs/formats.md lists every format of the reader registry (trajcheck.read.traces.FORMATS)
with its aliases, and names no format the readers do not have."""

from __future__ import annotations

import re
from pathlib import Path

from trajcheck.read.traces import _ALIASES, FORMATS, load

DOC = Path(__file__).resolve().parents[1] / "docs" / "formats.md"


def _rows() -> dict[str, set[str]]:
    """format name -> the aliases its row names, from the 'Every format' table."""
    text = DOC.read_text(encoding="utf-8")
    table = text.split("## Every format", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, set[str]] = {}
    for line in table.splitlines():
        m = re.match(r"\| `([a-z0-9_]+)`(?: \(([^)]*)\))? \|", line)
        if m:
            rows[m.group(1)] = {a.strip() for a in (m.group(2) or "").split(",") if a.strip()}
    return rows


def test_every_format_has_a_row_and_every_row_is_a_format() -> None:
    rows = _rows()
    assert sorted(rows) == sorted(FORMATS)
    assert len(rows) == len(FORMATS) == 31


def test_every_alias_is_named_in_its_formats_row() -> None:
    rows = _rows()
    missing = {a: f for a, f in _ALIASES.items() if a not in rows.get(f, set())}
    assert missing == {}
    named = {a: f for f, aliases in rows.items() for a in aliases}
    assert {a: f for a, f in named.items() if _ALIASES.get(a) != f} == {}


def test_the_named_formats_and_aliases_are_accepted(tmp_path: Path) -> None:
    p = tmp_path / "calls.json"
    p.write_text('[{"name": "f", "args": {"x": 1}}]', encoding="utf-8")
    for name in [*_rows(), *_ALIASES]:
        try:
            load(p, format=name)
        except Exception as e:  # a misfit is fine; an unknown format name is not
            assert "unknown trace format" not in str(e), name
