"""``json.loads(json.dumps(x, default=str))`` without the text in between, for plain values.

Full per-run results copy each metric's dict and each shown argument through JSON text, so
that what a result holds is exactly what its JSON form reads back. For values made of
``dict`` with ``str`` keys, ``list``, ``tuple``, ``str``, ``int``, finite ``float``,
``bool`` and None -- what metrics and parsed arguments hold -- that round trip gives an
equal copy of the same shape (a tuple read back as a list), which ``json_copy`` builds
directly; anything else (other key or value types, NaN or infinities, integers too long
for ``int``'s text conversion, cycles) takes the round trip itself, so the result, or the
error raised, is the round trip's.
"""

from __future__ import annotations

import json
from typing import Any

_BIG = 10**4000  # well inside the interpreter's int-to-text limit (4,300 digits by default)


class _NotPlain(Exception):
    """A value ``_copy`` leaves to the JSON round trip."""


def json_copy(x: Any) -> Any:
    """``json.loads(json.dumps(x, default=str))`` (module doc). Raises what that raises."""
    try:
        return _copy(x)
    except (_NotPlain, RecursionError):
        return json.loads(json.dumps(x, default=str))


def _copy(x: Any) -> Any:
    t = type(x)
    if t is str or t is bool or x is None:
        return x
    if t is int:
        if -_BIG < x < _BIG:
            return x
        raise _NotPlain
    if t is float:
        if x - x == 0.0:  # finite (NaN and infinities read back as other objects)
            return x
        raise _NotPlain
    if t is dict:
        out = {}
        for k, v in x.items():
            if type(k) is not str:
                raise _NotPlain  # json writes other keys as text
            tv = type(v)  # the common leaves here, as above, without a call each
            if (tv is str or tv is bool or v is None or (tv is int and -_BIG < v < _BIG)
                    or (tv is float and v - v == 0.0)):
                out[k] = v
            else:
                out[k] = _copy(v)
        return out
    if t is list or t is tuple:
        out_l = []
        for v in x:
            tv = type(v)  # the common leaves inline, as in a dict
            if (tv is str or tv is bool or v is None or (tv is int and -_BIG < v < _BIG)
                    or (tv is float and v - v == 0.0)):
                out_l.append(v)
            else:
                out_l.append(_copy(v))
        return out_l
    raise _NotPlain


__all__ = ["json_copy"]
