"""Final state: what a run changed in the world, and whether that is what the case expects.

``state_diff`` compares two snapshots ``{table: [row dict]}`` (``trajcheck.run.sandbox``) as
multisets of rows with volatile fields ignored; ``describe_rows`` tells a table's change in
words; ``check_final_state`` applies a case's ``expected_final_state`` to that diff (expected
rows paired one-to-one by maximum matching, any other change a failure). Definitions:
DESIGN.md ("Final state" policy) and tau-bench's reward (final-database equality).
``trajcheck.metrics.outcome`` combines the result with the response check.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import MetricInputError
from .result import MetricResult

DEFAULT_IGNORE: tuple[str, ...] = ("id", "created_at", "updated_at")

State = Mapping[str, Sequence[Mapping[str, Any]]]

__all__ = ["DEFAULT_IGNORE", "State", "StateDiff", "check_final_state", "describe_rows", "state_diff"]


# ---------------------------------------------------------------------------------------
# canonical values (multiset keys)

_NAN = ("<nan>",)


def _freeze(v: Any) -> Any:
    """A hashable, type-aware canonical form of a row value.

    Numbers compare by value (``2 == 2.0``) but bools stay distinct from numbers
    (``True != 1``); NaN equals NaN (so an unchanged NaN is no change); dicts compare by
    key regardless of order; lists and tuples in order.
    """
    if isinstance(v, bool):
        return ("<bool>", v)
    if isinstance(v, float) and math.isnan(v):
        return _NAN
    if isinstance(v, Mapping):
        return ("<dict>", tuple(sorted(((str(k), _freeze(x)) for k, x in v.items()),
                                       key=lambda kv: kv[0])))
    if isinstance(v, (list, tuple)):
        return ("<list>", tuple(_freeze(x) for x in v))
    if isinstance(v, (set, frozenset)):
        return ("<set>", frozenset(_freeze(x) for x in v))
    try:
        hash(v)
    except TypeError:
        return ("<repr>", repr(v))
    return v


def _row_canon(row: Mapping[str, Any], ignore: frozenset[str]) -> Any:
    return tuple(sorted(((k, _freeze(v)) for k, v in row.items() if k not in ignore),
                        key=lambda kv: kv[0]))


def _check_state(state: Any, what: str) -> dict[str, list[Mapping[str, Any]]]:
    if state is None:
        return {}
    if not isinstance(state, Mapping):
        raise MetricInputError(f"{what} state must be a mapping {{table: [row dict]}}, "
                               f"got {type(state).__name__}")
    out: dict[str, list[Mapping[str, Any]]] = {}
    for t, rows in state.items():
        if not isinstance(t, str):
            raise MetricInputError(f"{what} state: table name {t!r} is not a string")
        if rows is None:
            rows = []
        if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence):
            raise MetricInputError(f"{what} state: table {t!r} must be a list of row dicts, "
                                   f"got {type(rows).__name__}")
        for i, r in enumerate(rows):
            if not isinstance(r, Mapping):
                raise MetricInputError(f"{what} state: table {t!r} row {i} must be a dict, "
                                       f"got {type(r).__name__}")
        out[t] = list(rows)
    return out


# ---------------------------------------------------------------------------------------
# state_diff


@dataclass(frozen=True)
class StateDiff(Mapping[str, dict[str, list[dict[str, Any]]]]):
    """The difference between two snapshots, per table (multiset semantics).

    Read as a mapping it is seed 000 §4.1's ``state_diff`` result: ``diff[table]`` is
    ``{"added": [...], "removed": [...]}`` with the ignored (volatile) fields left out of
    every row, and its keys are the tables with an added or removed row (so
    ``set(diff) - {"tickets"}`` are the other tables that changed and ``diff.get(t, {})``
    works). An empty diff is falsy.

    ``added[t]`` / ``removed[t]`` (attributes): the same rows as the original row dicts
    (ignored fields included, e.g. to name the changed row's ``id``), in snapshot order;
    only tables with a change are keys. ``tables_dropped`` / ``tables_created``: tables
    missing from one side (their rows are in removed / added).
    """

    added: dict[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    removed: dict[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    tables_dropped: tuple[str, ...] = ()
    tables_created: tuple[str, ...] = ()
    ignore: tuple[str, ...] = DEFAULT_IGNORE

    def __getitem__(self, table: str) -> dict[str, list[dict[str, Any]]]:
        if table not in self.added and table not in self.removed:
            raise KeyError(table)
        ig = frozenset(self.ignore)
        return {k: [{f: v for f, v in r.items() if f not in ig} for r in rows.get(table, ())]
                for k, rows in (("added", self.added), ("removed", self.removed))}

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(set(self.added) | set(self.removed)))

    def __len__(self) -> int:
        return len(set(self.added) | set(self.removed))

    @property
    def is_empty(self) -> bool:
        """True when nothing was added, removed, dropped or created."""
        return not (self.added or self.removed or self.tables_dropped or self.tables_created)

    @property
    def changed_tables(self) -> tuple[str, ...]:
        """Names of tables with any change, sorted."""
        return tuple(sorted(set(self.added) | set(self.removed) | set(self.tables_dropped)
                            | set(self.tables_created)))

    def summary(self) -> str:
        """One line, e.g. ``tickets: +1 -0; audit_log: +0 -3 (dropped)`` or ``no change``."""
        if self.is_empty:
            return "no change"
        parts = []
        for t in self.changed_tables:
            s = f"{t}: +{len(self.added.get(t, ()))} -{len(self.removed.get(t, ()))}"
            if t in self.tables_dropped:
                s += " (dropped)"
            if t in self.tables_created:
                s += " (created)"
            parts.append(s)
        return "; ".join(parts)

    def describe(self, table: str) -> str:
        """The change to one table in words, e.g. ``1 row changed (status: 'open' -> 'closed'),
        1 row added`` (see ``describe_rows``; the diff itself is unchanged: a changed row is
        still one removed and one added row)."""
        return describe_rows(self.removed.get(table, ()), self.added.get(table, ()), self.ignore)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: added/removed row lists per table, dropped/created tables."""
        return {
            "added": {t: [dict(r) for r in rows] for t, rows in self.added.items()},
            "removed": {t: [dict(r) for r in rows] for t, rows in self.removed.items()},
            "tables_dropped": list(self.tables_dropped),
            "tables_created": list(self.tables_created),
            "ignore": list(self.ignore),
            "summary": self.summary(),
        }


def _rows(n: int) -> str:
    return f"{n} row{'' if n == 1 else 's'}"


def _same_row(r: Mapping[str, Any], a: Mapping[str, Any], ignore: frozenset[str]) -> bool:
    """Whether removed row ``r`` and added row ``a`` read as one row that changed: both carry
    the same non-null ``id``; or, without ids, the same field names with fewer than half of
    the compared (non-ignored) fields different."""
    if r.get("id") is not None and a.get("id") is not None:
        return _freeze(r["id"]) == _freeze(a["id"])
    if "id" in r or "id" in a or set(r) != set(a):
        return False
    keys = [k for k in r if k not in ignore]
    diff = sum(1 for k in keys if _freeze(r[k]) != _freeze(a[k]))
    return 0 < diff and 2 * diff < len(keys)


def describe_rows(removed: Sequence[Mapping[str, Any]], added: Sequence[Mapping[str, Any]],
                  ignore: Sequence[str] = DEFAULT_IGNORE) -> str:
    """Removed and added rows of one table in words, for reasons and summaries.

    A removed and an added row that share their key (``_same_row``: same ``id``, or without
    ids mostly the same fields) are told as one changed row, with the first three changed
    fields of the first such row: ``"1 row changed (status: 'open' -> 'closed')"``; the rest
    as ``"N row(s) added"`` / ``"N row(s) removed"``; ``"no change"`` when both are empty.
    Wording only: ``state_diff`` still counts a changed row as one removed and one added.
    """
    ig = frozenset(ignore)
    left = list(added)
    changed: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []
    gone: list[Mapping[str, Any]] = []
    for r in removed:
        j = next((j for j, a in enumerate(left) if _same_row(r, a, ig)), None)
        if j is None:
            gone.append(r)
        else:
            changed.append((r, left.pop(j)))
    bits: list[str] = []
    if changed:
        r, a = changed[0]
        fields = [k for k in dict.fromkeys(list(r) + list(a))
                  if k not in ig and _freeze(r.get(k)) != _freeze(a.get(k))]
        what = "; ".join(f"{k}: {_fmt_val(r.get(k))} -> {_fmt_val(a.get(k))}" for k in fields[:3])
        more = f"; +{len(fields) - 3} more field(s)" if len(fields) > 3 else ""
        first = "first: " if len(changed) > 1 else ""
        bits.append(f"{_rows(len(changed))} changed ({first}{what}{more})" if what
                    else f"{_rows(len(changed))} changed")
    if left:
        bits.append(f"{_rows(len(left))} added")
    if gone:
        bits.append(f"{_rows(len(gone))} removed")
    return ", ".join(bits) or "no change"


def _fmt_val(v: Any, n: int = 40) -> str:
    s = repr(v)
    return s if len(s) <= n else s[: n - 3] + "..."


def _minus(rows: list[Mapping[str, Any]], other: list[Mapping[str, Any]],
           ignore: frozenset[str]) -> tuple[dict[str, Any], ...]:
    left = Counter(_row_canon(r, ignore) for r in other)
    out = []
    for r in rows:
        k = _row_canon(r, ignore)
        if left[k] > 0:
            left[k] -= 1
        else:
            out.append(dict(r))
    return tuple(out)


def state_diff(before: State, after: State, *, ignore: Sequence[str] = DEFAULT_IGNORE) -> StateDiff:
    """Diff two snapshots ``{table: [row dict]}`` per table, ignoring volatile fields.

    Args:
        before: the state before the run.
        after: the state after it.
        ignore: top-level fields left out of the comparison.

    Returns:
        A ``StateDiff``: ``added`` and ``removed`` rows per table, ``tables_dropped``,
        ``tables_created``.

    Raises:
        MetricInputError: a state is not ``{str: [dict]}`` (names the table and row index).

    Examples:
        An update shows as one row removed and one added (``id`` is ignored):

        >>> d = state_diff({"orders": [{"id": 7, "status": "paid"}]},
        ...                {"orders": [{"id": 7, "status": "refunded"}]})
        >>> d.removed, d.added
        ({'orders': ({'id': 7, 'status': 'paid'},)}, {'orders': ({'id': 7, 'status': 'refunded'},)})

    Policy (DESIGN.md, "Final state"): rows are compared with the top-level fields named in
    ``ignore`` removed, as multisets (two identical rows before and one after = one removed).
    A table dropped (absent from ``after``) or emptied shows all its rows as removed (a
    dropped table is also listed in ``tables_dropped``); a new table's rows are added. Values
    compare type-aware (``2 == 2.0``, ``True != 1``, dicts by key, lists in order) and NaN
    equals NaN. A table given as None counts as empty.
    """
    if isinstance(ignore, str):
        raise MetricInputError(f"ignore must be a list of field names, not the string {ignore!r}")
    b = _check_state(before, "before")
    a = _check_state(after, "after")
    ig = frozenset(ignore)
    added: dict[str, tuple[dict[str, Any], ...]] = {}
    removed: dict[str, tuple[dict[str, Any], ...]] = {}
    for t in sorted(set(b) | set(a)):
        rb, ra = b.get(t, []), a.get(t, [])
        rem = _minus(rb, ra, ig)
        add = _minus(ra, rb, ig)
        if rem:
            removed[t] = rem
        if add:
            added[t] = add
    return StateDiff(
        added=added,
        removed=removed,
        tables_dropped=tuple(sorted(set(b) - set(a))),
        tables_created=tuple(sorted(set(a) - set(b))),
        ignore=tuple(ignore),
    )


# ---------------------------------------------------------------------------------------
# check_final_state


def _field_matchers(matchers: Mapping[str, Any] | None, table: str) -> dict[str, Any]:
    if not matchers:
        return {}
    out: dict[str, Any] = {}
    for key in ("*", table):
        spec = matchers.get(key)
        if spec is None:
            continue
        if not isinstance(spec, Mapping):
            raise MetricInputError(f"matchers[{key!r}] must map field names to matcher specs")
        out.update(spec)
    return out


def _row_matches(exp: Mapping[str, Any], row: Mapping[str, Any], fmatch: Mapping[str, Any],
                 ctx: Any) -> bool:
    from ..match.matchers import MISSING, get_matcher

    for k, ev in exp.items():
        m = get_matcher(fmatch.get(k))
        if k not in row:
            if not m.allows_missing(ev):
                return False
            continue
        rv = row[k]
        if isinstance(ev, float) and math.isnan(ev) and isinstance(rv, float) and math.isnan(rv):
            continue
        if not m(ev, rv, ctx):
            return False
    for k, spec in fmatch.items():  # a matcher with no expected value: check presence
        if k not in exp:
            m = get_matcher(spec)
            if not m.check_unexpected(row.get(k, MISSING), ctx):
                return False
    return True


def _pair(expected: Sequence[Mapping[str, Any]], actual: Sequence[Mapping[str, Any]],
          fmatch: Mapping[str, Any], ctx: Any) -> list[int]:
    from ..match.matching import max_matching

    adj = [[j for j, r in enumerate(actual) if _row_matches(e, r, fmatch, ctx)] for e in expected]
    return max_matching(adj, len(actual))


def _table_spec(table: str, spec: Any) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]] | None]:
    """(expected added rows, expected removed rows or None = none allowed)."""
    if isinstance(spec, Mapping):
        unknown = set(spec) - {"added", "removed"}
        if unknown:
            raise MetricInputError(f"expected_final_state[{table!r}]: unknown keys {sorted(unknown)}; "
                                   "use a list of rows or {'added': [...], 'removed': [...]}")
        added = spec.get("added") or []
        removed = spec.get("removed")
    else:
        added, removed = spec, None
    for what, rows in (("added", added), ("removed", removed)):
        if rows is None:
            continue
        if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence):
            raise MetricInputError(f"expected_final_state[{table!r}] {what} rows must be a list")
        for i, r in enumerate(rows):
            if not isinstance(r, Mapping):
                raise MetricInputError(f"expected_final_state[{table!r}] {what} row {i} must be a dict")
    return list(added), (list(removed) if removed is not None else None)


def _fmt_row(r: Mapping[str, Any], n: int = 160) -> str:
    s = repr(dict(r))
    return s if len(s) <= n else s[: n - 3] + "..."


def check_final_state(before: State, after: State, expected_final_state: Mapping[str, Any] | None, *,
                      ignore: Sequence[str] = DEFAULT_IGNORE,
                      matchers: Mapping[str, Mapping[str, Any]] | None = None,
                      context: Any = None) -> MetricResult:
    """Whether the run changed the state exactly as the case expects.

    Args:
        before: the state before the run, ``{table: [row dict]}``.
        after: the state after it.
        expected_final_state: per table, a list of expected *added* rows, or ``{"added":
            [rows], "removed": [rows]}`` (an update is one removed and one added row); None
            when the case states none.
        ignore: top-level fields left out of the diff (``state_diff``).
        matchers: ``{table: {field: spec}}`` (``"*"`` for every table), specs as in
            ``trajcheck.match.matchers.get_matcher``; default per field ``exact``.
        context: a ``MatchContext`` for semantic/judge matchers.

    Returns:
        ``MetricResult`` named ``final_state``: score 1.0/0.0, ``passed``, ``reason`` naming
        the first problem (e.g. ``"table audit_log: 3 rows removed"``), ``parts`` with
        ``problems`` (all of them), ``diff`` and ``matched``/``expected`` counts. Score None
        (not applicable) when ``expected_final_state`` is None.

    Raises:
        MetricInputError: a malformed state or expectation.
        MatcherError: an unknown matcher.

    Examples:
        The order went from paid to refunded, as expected:

        >>> before = {"orders": [{"id": 7, "status": "paid"}]}
        >>> after = {"orders": [{"id": 7, "status": "refunded"}]}
        >>> check_final_state(before, after, {"orders": {"added": [{"status": "refunded"}],
        ...                                              "removed": [{"status": "paid"}]}}).score
        1.0
        >>> check_final_state(before, after, {"orders": [{"status": "refunded"}]}).reason
        'table orders: 1 row removed'

    Expected rows are partial: every field they give must match the row's field (a missing
    field fails unless its matcher allows absence); other fields are free. Default comparison
    is type-aware (``2 == 2.0``, ``True != 1``, ``"1" != 1``); a matcher given for a field the
    expected row leaves out checks the value is present and non-empty.

    Policy (DESIGN.md "Final state", "Task success"): success needs every expected row
    added -- expected rows paired one-to-one with the table's added rows by MAXIMUM bipartite
    matching -- AND no other change: no unpaired added row, no removed row except the
    expected removed rows (also paired one-to-one, all of which must have been removed),
    no change to any table the expectation does not name, no table dropped.
    """
    diff = state_diff(before, after, ignore=ignore)
    if expected_final_state is None:
        return MetricResult("final_state", None, "no expected_final_state for this case",
                            {"diff": diff.to_dict()}, None)
    if not isinstance(expected_final_state, Mapping):
        raise MetricInputError("expected_final_state must be a mapping {table: [rows]}")
    if context is None:
        from ..match.matchers import MatchContext

        context = MatchContext()
    problems: list[str] = []
    n_expected = n_matched = 0
    for t in sorted(expected_final_state):
        exp_added, exp_removed = _table_spec(t, expected_final_state[t])
        fm = _field_matchers(matchers, t)
        act_added = list(diff.added.get(t, ()))
        act_removed = list(diff.removed.get(t, ()))
        for exp_rows, act_rows, verb in ((exp_added, act_added, "added"),
                                         (exp_removed or [], act_removed, "removed")):
            ml = _pair(exp_rows, act_rows, fm, context)
            n_expected += len(exp_rows)
            n_matched += sum(1 for j in ml if j != -1)
            for i, j in enumerate(ml):
                if j == -1:
                    problems.append(f"expected row not {verb} in {t}: {_fmt_row(exp_rows[i])}")
            used = {j for j in ml if j != -1}
            extra = [r for j, r in enumerate(act_rows) if j not in used]
            if verb == "added":
                problems.extend(f"unexpected added row in {t}: {_fmt_row(r)}" for r in extra)
            elif exp_removed is None:
                if t in diff.tables_dropped:
                    problems.append(f"table {t}: dropped ({_rows(len(extra))} removed)")
                elif extra:
                    problems.append(f"table {t}: {_rows(len(extra))} removed")
            else:
                problems.extend(f"unexpected removed row in {t}: {_fmt_row(r)}" for r in extra)
                if t in diff.tables_dropped:
                    problems.append(f"table {t}: dropped")
    for t in diff.changed_tables:
        if t in expected_final_state:
            continue
        n_rem, n_add = len(diff.removed.get(t, ())), len(diff.added.get(t, ()))
        if t in diff.tables_dropped:
            problems.append(f"table {t}: dropped ({_rows(n_rem)} removed)")
        elif n_rem and n_add:
            problems.append(f"table {t} changed: {diff.describe(t)}")
        elif n_rem:
            problems.append(f"table {t}: {_rows(n_rem)} removed")
        elif n_add:
            problems.append(f"unexpected added row in {t}: {_fmt_row(diff.added[t][0])}"
                            + (f" (and {n_add - 1} more)" if n_add > 1 else ""))
        else:
            problems.append(f"table {t}: created")
    ok = not problems
    if ok:
        reason = (f"final state as expected ({n_matched} expected row change"
                  f"{'' if n_matched == 1 else 's'} found, nothing else changed)")
    else:
        more = len(problems) - 1
        reason = problems[0] + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")
    parts = {"problems": problems, "matched": n_matched, "expected": n_expected,
             "diff": diff.to_dict()}
    return MetricResult("final_state", 1.0 if ok else 0.0, reason, parts, ok)
