"""The items of a top-level JSON array as separate texts, found without parsing them.

Used when a JSON file's whole-document parse is refused for its depth (Python's parser cannot
follow ~1,000 levels, orjson 1,024): each item is then parsed on its own, so one record nested
too deep is lost and reported, as one such line of a JSON Lines file is, instead of the whole
file being refused. The scan is iterative (a regex over strings and brackets), so depth does
not matter to it.
"""

from __future__ import annotations

import re

# a JSON string (with its escapes), or one structural character
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},]', re.DOTALL)


def split_array(text: str) -> list[str] | None:
    """The texts of the items of the JSON array that ``text`` holds, in order.

    Args:
        text: the whole document (leading and trailing whitespace allowed).

    Returns:
        One string per item (not parsed, not checked), or None when ``text`` is not one
        array: it does not start with ``[``, its brackets do not balance, a string is not
        closed, or something other than whitespace follows the closing ``]``.
    """
    start = len(text) - len(text.lstrip())
    if not text.startswith("[", start):
        return None
    depth = 0
    items: list[str] = []
    item_from = start + 1
    for m in _TOKEN.finditer(text, start):
        tok = m.group()
        if tok[0] == '"':
            continue
        if tok in "[{":
            depth += 1
        elif tok in "]}":
            depth -= 1
            if depth == 0:
                last = text[item_from:m.start()]
                if last.strip():
                    items.append(last)
                elif items:
                    return None  # a trailing comma: not JSON
                return items if not text[m.end():].strip() else None
            if depth < 0:
                return None
        elif depth == 1:  # a comma between items
            items.append(text[item_from:m.start()])
            item_from = m.end()
    return None


__all__ = ["split_array"]
