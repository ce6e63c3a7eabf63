"""Text from traces and datasets made safe to show: in a terminal, in Markdown.

Tool names, run ids, case ids, arguments and reasons come from files trajcheck did not
write. Shown as they are, ``[/bold]`` is rich markup (an unbalanced tag raises and aborts the
report), ``\\x1b[2J`` is a terminal command, and ``<script>`` or ``[x](javascript:...)`` is
live once a Markdown report is rendered. These helpers show such text literally:

- ``visible``: control characters (C0 but tab and newline, DEL, C1) and bidirectional
  overrides written as escapes (``\\x1b``, ``\\u202e``), so they print but do nothing;
- ``SafeTable``: a rich ``Table`` whose string cells, title and headers are plain text
  (never markup) shown through ``visible``;
- ``md``: text for inside a Markdown table cell or list item: ``visible``, newlines as
  spaces, a ``<`` that could open a tag, comment or autolink as ``&lt;`` (no HTML, no
  links), and backslash escapes for ``\\``, ``|``
  (no cell breaks) and a ``]`` before ``(`` or ``[`` (no links or images). Emphasis
  characters are left alone: they can change how text looks, not what it does.
"""

from __future__ import annotations

import re
from typing import Any

from rich.table import Table
from rich.text import Text

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")  # what can open an HTML tag, comment or autolink
_MD_META = re.compile(r"([\\|]|\](?=[(\[]))")


def _esc(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def visible(s: Any) -> str:
    """``str(s)`` with control characters and bidi overrides written as escapes."""
    s = s if isinstance(s, str) else str(s)
    return _CONTROL.sub(_esc, s) if _CONTROL.search(s) else s


def md(s: Any) -> str:
    """``s`` as literal text inside a Markdown table cell or list item (see the module doc)."""
    t = visible(s).replace("\r", " ").replace("\n", " ")
    t = _MD_META.sub(r"\\\1", t)
    return _TAG_START.sub("&lt;", t)


def _plain(x: Any) -> Any:
    return Text(visible(x)) if isinstance(x, str) else x


class SafeTable(Table):
    """A rich ``Table`` that shows its string cells, title and column headers as plain text:
    no markup is parsed in them and control characters are escaped (``visible``). Style
    arguments (``style="bold"``) work as usual."""

    def __init__(self, *headers: Any, title: Any = None, **kw: Any) -> None:
        super().__init__(*(_plain(h) for h in headers), title=_plain(title), **kw)

    def add_column(self, header: Any = "", *args: Any, **kw: Any) -> None:
        super().add_column(_plain(header), *args, **kw)

    def add_row(self, *renderables: Any, **kw: Any) -> None:
        super().add_row(*(_plain(r) for r in renderables), **kw)


__all__ = ["SafeTable", "md", "visible"]
