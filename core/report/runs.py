"""The run-level parts of the HTML report: the case x trial grid, the table of every run
(sortable and filterable in the browser, complete without JavaScript) and each run's
drill-down (expected calls beside the calls made, the full reason list, rule violations,
false-success claims, the steps with their results).

Everything here is HTML text built from a ``Scorecard`` (``RunResult.calls`` from
``run_detail.call_detail``, ``RunResult.transcript``, ``RunResult.metrics``); nothing is
scored again. Element ids a test or a link can use: ``#case-grid`` (cells ``td.cell`` with
``data-run`` and ``data-verdict`` ``pass``/``fail``/``gate``), ``#runs`` (rows ``tr.run-row`` with
``data-case``, ``data-verdict``, ``data-kind``, ``data-tools``, ``data-f1``,
``data-composite``, ``data-steps``, ``data-cost``), ``#run-<id>`` (a run's ``details``),
``#run-<id>-call-<i>`` and ``#run-<id>-step-<n>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .html import _e, _slug
from .scorecard import RunResult, Scorecard
from .text import fmt, ordering_violations

# failure kinds, in the order the filter lists them; "none" for a run that passed
_KINDS: tuple[tuple[str, str], ...] = (
    ("unfinished", r"run did not finish"),
    ("expected call never made", r"not matched: the tool was never called|was never called"),
    ("expected call failed", r"not matched: (?:the call|every call) of the tool failed"),
    ("wrong arguments", r"not matched: (?:closest call|call \d+ of the run matches)"),
    ("extra write", r"unexpected state-changing call"),
    ("response incomplete", r"response is missing"),
    ("final state", r"final state|expected row|table \S+|unexpected added row"),
)


def verdict(r: RunResult) -> str:
    """``"pass"``, ``"fail"`` (task failed) or ``"gate"`` (task succeeded, composite gate
    failed)."""
    return "fail" if not r.success else "gate" if r.gate_failed else "pass"


VERDICT_LABEL = {"pass": "pass", "fail": "fail", "gate": "gate failed"}


def reason_kind(r: RunResult) -> str:
    """A short failure category for filtering: the first of ``_KINDS`` whose pattern the
    run's failure reason matches, ``"composite gate"`` for a gate failure, ``"other"`` for
    an unclassified failure, ``"none"`` for a run that passed."""
    v = verdict(r)
    if v == "pass":
        return "none"
    if v == "gate":
        return "composite gate"
    text = r.failure_reason or r.outcome_reason or ""
    for kind, pat in _KINDS:
        if re.search(pat, text):
            return kind
    return "other"


def _find_lists(d: Any, key: str) -> list[Any]:
    """Every list under ``key`` anywhere inside ``d`` (nested parts of a metric), in order."""
    out: list[Any] = []
    if isinstance(d, Mapping):
        for k, v in d.items():
            if k == key and isinstance(v, list):
                out.extend(v)
            elif isinstance(v, (Mapping, list)):
                out.extend(_find_lists(v, key))
    elif isinstance(d, list):
        for v in d:
            out.extend(_find_lists(v, key))
    return out


def reasons(r: RunResult) -> list[str]:
    """The full list of reasons behind a run's verdict (never cut, no "(and N more)"): the
    outcome's problems (``parts.problems`` at any depth), else its one-line reason; a
    composite-gate failure adds the composite's reason."""
    parts = (r.metrics.get("outcome") or {}).get("parts")
    out = [str(x) for x in _find_lists(parts, "problems")]
    missing = [str(x) for x in _find_lists(parts, "missing")]
    if missing:  # the response check names its first missing item "(and N more)": name all
        full = "response is missing " + ", ".join(repr(x) for x in dict.fromkeys(missing))
        out = [re.sub(r"response is missing .*\(and \d+ more\)$", full, x) for x in out]
    if not out:
        out = [r.outcome_reason] if r.outcome_reason else []
    if r.gate_failed:
        comp = (r.metrics.get("composite") or {}).get("reason")
        out.append(str(comp or r.failure_reason or "composite below its threshold"))
    return list(dict.fromkeys(out))


def violations(r: RunResult) -> list[str]:
    """Rule violations of a run, one line each: forbidden calls (call table flag),
    forbidden-sequence violations (``metrics.forbidden_sequences``) and violated precedence
    rules (``report.ordering_violations``)."""
    out: list[str] = []
    for c in (r.calls or {}).get("called") or ():
        if "forbidden" in (c.get("flags") or ()):
            out.append(f"forbidden call {c.get('index')}: {c.get('name')}")
    for v in ((r.metrics.get("forbidden_sequences") or {}).get("parts") or {}).get("violations") or ():
        if isinstance(v, Mapping):
            out.append(f"{v.get('severity', '')} forbidden sequence: call {v.get('call_index')} "
                       f"{v.get('tool')} breaks {v.get('rule')} ({v.get('why')})")
    ov = ordering_violations(r)
    if ov:
        out.append(ov)
    return out


def false_claim(r: RunResult) -> bool:
    """Whether the page flags the run as a false success claim: exactly the scorecard's
    ``false_success`` (True), so the page and the JSON never disagree. A failed run whose
    response merely reads as a claim (the call table's ``claims_success``) is not flagged
    when the scorecard did not decide a false success (``false_success`` None or False)."""
    return r.false_success is True


def _tools(r: RunResult) -> list[str]:
    return sorted(set(r.called_tools) | set(r.expected_tools))


def _num(x: Any) -> str:
    return "" if x is None else repr(float(x))


def _cost(x: Any) -> str:
    return "" if x is None else fmt(x, 6)


# ------------------------------------------------------------------ grid


def case_grid(sc: Scorecard) -> str:
    """The case x trial grid: one row per case, one cell per trial coloured by verdict and
    linking to the run, then successes / trials and the case's pass^k for each k of the
    suite (C(c,k)/C(n,k), ``metrics.reliability.pass_hat_k``); flaky cases (some but not
    all trials pass) are marked. Counts come from the case results, so a scorecard that
    lists only some runs (``--keep-runs``) still shows every case's figures, with a dot for
    each run not listed."""
    from ..metrics.reliability import pass_hat_k

    by_case: dict[str, list[RunResult]] = {c.case_id: [] for c in sc.cases}
    for r in sc.runs:
        by_case.setdefault(r.case_id, []).append(r)
    if not by_case:
        return ""
    for rs in by_case.values():
        rs.sort(key=lambda r: (r.trial is None, r.trial or 0))
    # counts from the case results: a scorecard may list only some runs (--keep-runs)
    counts = {c.case_id: (c.trials, c.successes) for c in sc.cases}
    width = max(max(len(rs), counts.get(cid, (0, 0))[0]) for cid, rs in by_case.items())
    ks = sorted(sc.suite.pass_hat_k)
    h = ['<table id="case-grid" class="grid-table"><thead><tr><th>case</th>']
    h += [f'<th class="num">{t}</th>' for t in range(width)]
    h.append('<th class="num">passed</th>')
    h += [f'<th class="num">pass^{k}</th>' for k in ks]
    h.append("</tr></thead><tbody>")
    for cid, rs in by_case.items():
        n, c = counts.get(cid, (len(rs), sum(r.success for r in rs)))
        flaky = 0 < c < n
        cls = "flaky" if flaky else ("all-pass" if c == n else "all-fail")
        h.append(f'<tr class="grid-row {cls}" data-case="{_e(cid)}"><th class="case">{_e(cid)}'
                 + (' <span class="tag">flaky</span>' if flaky else "") + "</th>")
        for r in rs:
            v = verdict(r)
            mark = {"pass": "&#10003;", "fail": "&#10007;", "gate": "!"}[v]
            h.append(f'<td class="cell v-{v}" data-verdict="{v}" data-run="{_e(r.run_id)}"><a href="#run-{_slug(r.run_id)}" '
                     f'title="{_e(r.run_id)}: {VERDICT_LABEL[v]}">{mark}</a></td>')
        h += ['<td class="cell unlisted" title="run not listed in this scorecard">&middot;</td>'] * (n - len(rs))
        h += ['<td class="cell empty"></td>'] * (width - max(n, len(rs)))
        h.append(f'<td class="num">{c}/{n}</td>')
        for k in ks:
            v2 = pass_hat_k({cid: (c, n)}, k) if n >= k else None
            h.append(f'<td class="num">{fmt(v2)}</td>')
        h.append("</tr>")
    h.append("</tbody></table>")
    return "".join(h)


# ------------------------------------------------------------------ runs table


def _options(values: Iterable[tuple[str, str]]) -> str:
    return "".join(f'<option value="{_e(v)}">{_e(label)}</option>' for v, label in values)


def runs_controls(sc: Scorecard) -> str:
    """The filter form above the runs table (shown by the script; hidden when scripts are
    off, where the whole table shows)."""
    from collections import Counter

    cases = list(dict.fromkeys(r.case_id for r in sc.runs))
    kinds = Counter(reason_kind(r) for r in sc.runs)
    tools = sorted({t for r in sc.runs for t in _tools(r)})
    verdicts = Counter(verdict(r) for r in sc.runs)
    kind_order = ["none"] + [k for k, _ in _KINDS] + ["composite gate", "other"]
    return (
        '<form id="run-filters" class="filters" hidden onsubmit="return false">'
        '<label>search <input type="search" id="f-search" placeholder="run, case, reason, tool..."></label>'
        '<label>case <select id="f-case"><option value="">all</option>'
        + _options((c, c) for c in cases) + "</select></label>"
        '<label>verdict <select id="f-verdict"><option value="">all</option>'
        + _options((v, f"{VERDICT_LABEL[v]} ({verdicts[v]})") for v in ("pass", "fail", "gate") if verdicts[v])
        + "</select></label>"
        '<label>failure <select id="f-kind"><option value="">all</option>'
        + _options((k, f"{k} ({kinds[k]})") for k in kind_order if kinds[k]) + "</select></label>"
        '<label>tool <select id="f-tool"><option value="">all</option>'
        + _options((t, t) for t in tools) + "</select></label>"
        '<label>metric <select id="f-metric"><option value="">-</option>'
        + _options((("f1", "F1"), ("composite", "composite"), ("steps", "steps"), ("cost", "cost")))
        + '</select></label><select id="f-op"><option value="lt">&lt;</option>'
        '<option value="ge">&#8805;</option></select>'
        '<input type="number" id="f-value" step="any" size="6" placeholder="value">'
        '<button type="button" id="f-reset">reset</button>'
        f' <span id="f-count" class="muted">{len(sc.runs)} of {len(sc.runs)} runs</span></form>')


def runs_table(sc: Scorecard) -> str:
    """Every run, one row each, with the figures the filters and sorting use as ``data-*``
    attributes and a link to the run's drill-down."""
    cols = (("run", "text"), ("case", "text"), ("trial", "num"), ("verdict", "text"),
            ("failure", "text"), ("reason", "text"), ("F1", "num"), ("comp.", "num"),
            ("steps", "num"), ("calls", "num"), ("cost (USD)", "num"), ("flags", "text"))
    h = ['<table id="runs" class="runs-table"><thead><tr>']
    for i, (label, typ) in enumerate(cols):
        h.append(f'<th data-col="{i}" data-type="{typ}" class="sortable">{_e(label)}</th>')
    h.append("</tr></thead><tbody>")
    for r in sc.runs:
        v = verdict(r)
        kind = reason_kind(r)
        rl = reasons(r)
        why = _e((rl or [""])[0] if v != "pass" else r.outcome_reason)
        if v != "pass" and len(rl) > 1:  # the rest are listed in the run's drill-down
            why += f' <a class="more" href="#run-{_slug(r.run_id)}">+{len(rl) - 1} more</a>'
        flags = []
        if violations(r):
            flags.append("rule violation")
        if false_claim(r):
            flags.append("false success claim")
        if r.fault_run:
            flags.append("fault run")
        h.append(
            f'<tr class="run-row v-{v}" data-run="{_e(r.run_id)}" data-case="{_e(r.case_id)}" '
            f'data-verdict="{v}" data-kind="{_e(kind)}" data-tools="{_e(" ".join(_tools(r)))}" '
            f'data-f1="{_num(r.f1)}" data-composite="{_num(r.composite)}" data-steps="{r.steps}" '
            f'data-cost="{_num(r.cost_usd)}">'
            f'<td class="run"><a href="#run-{_slug(r.run_id)}">{_e(r.run_id)}</a></td>'
            f"<td>{_e(r.case_id)}</td><td class=\"num\">{_e('' if r.trial is None else r.trial)}</td>"
            f'<td><span class="badge {v}">{VERDICT_LABEL[v]}</span></td><td>{_e(kind)}</td>'
            f'<td class="reason">{why}</td><td class="num">{fmt(r.f1)}</td>'
            f'<td class="num">{fmt(r.composite)}</td><td class="num">{r.steps}</td>'
            f'<td class="num">{r.n_calls}</td><td class="num">{_cost(r.cost_usd)}</td>'
            f'<td class="flags">{_e(", ".join(flags))}</td></tr>')
    h.append("</tbody></table>")
    return "".join(h)


# ------------------------------------------------------------------ drill-down


def _args_html(args: Any, mark: str | None) -> str:
    """Arguments as ``key: value`` lines, the deciding argument ``mark`` highlighted."""
    if args is None:
        return '<span class="muted">(no arguments given)</span>'
    if not isinstance(args, Mapping):
        return f"<code>{_e(args)}</code>"
    if not args:
        return '<span class="muted">{}</span>'
    lines = []
    for k, v in args.items():
        text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        body = f"<b>{_e(k)}</b>: {_e(text)}"
        lines.append(f'<mark class="diff">{body}</mark>' if mark == k else body)
    return '<div class="args">' + "<br>".join(lines) + "</div>"


def _call_cell(rid: str, c: Mapping[str, Any], mark: str | None) -> str:
    fail = c.get("failed")
    err = ' <span class="badge fail">error result</span>' if fail else ""
    return (f'<a class="call" id="run-{rid}-call-{c.get("index")}" href="#run-{rid}-step-{c.get("step")}">'
            f'call {_e(c.get("index"))}</a> <code>{_e(c.get("name"))}</code>{err}'
            f"{_args_html(c.get('args'), mark)}")


def calls_table(r: RunResult) -> str:
    """Expected calls beside the calls made: one row per expected call with the call that
    made it (or the closest call of that tool), the deciding difference highlighted; then
    one row per other call with its verdict. Pairs share a ``data-pair`` key; each call
    links to its step."""
    d = r.calls
    if not d:
        return '<p class="muted">no call table in this scorecard (older trajcheck)</p>'
    rid = _slug(r.run_id)
    called = {c["index"]: c for c in d.get("called") or ()}
    shown: set[int] = set()
    h = ['<table class="calls"><thead><tr><th>expected</th><th>status</th><th>called</th>'
         "</tr></thead><tbody>"]
    for e in d.get("expected") or ():
        j = e.get("index")
        i = e.get("pred_index") if e.get("args_ok") else e.get("closest")
        c = called.get(i) if i is not None else None
        if e.get("args_ok") and c is not None and c.get("failed"):
            # right call, but its result was an error: what the outcome turned on
            status, cls = "matched, but the call failed", "wrong"
        elif e.get("args_ok"):
            status, cls = "matched", "matched"
        elif e.get("made"):
            status, cls = "wrong arguments", "wrong"
        else:
            status, cls = "not made", "missing"
        mark = e.get("diff_arg")
        if c is not None:
            # a closest call paired with another expected call stays in that call's row too
            if c.get("exp_index") in (None, j) or c.get("verdict") != "matched":
                shown.add(int(c["index"]))
            right = _call_cell(rid, c, mark)
            if not e.get("args_ok") and not e.get("made"):
                right = '<span class="muted">closest:</span> ' + right
        else:
            right = '<span class="muted">(no call)</span>'
        diff = f'<div class="decide">{_e(e.get("diff"))}</div>' if e.get("diff") and not e.get("args_ok") else ""
        h.append(f'<tr class="pair {cls}" data-pair="{rid}-{j}"><td><span class="muted">expected {_e(j)}</span> '
                 f'<code>{_e(e.get("name"))}</code>{_args_html(e.get("args"), mark)}</td>'
                 f'<td class="status"><span class="st {cls}">{status}</span>{diff}</td><td>{right}</td></tr>')
    for i, c in sorted(called.items()):
        if i in shown:
            continue
        v = str(c.get("verdict"))
        h.append(f'<tr class="extra {_e(v)}"><td></td><td class="status"><span class="st {_e(v)}">'
                 f'{_e(v.replace("_", " "))}</span><div class="muted">{_e(c.get("reason"))}</div></td>'
                 f"<td>{_call_cell(rid, c, None)}</td></tr>")
    h.append("</tbody></table>")
    return "".join(h)


def _step_html(rid: str, st: Mapping[str, Any]) -> str:
    kind = str(st.get("kind", ""))
    tr = st.get("tool_result") or {}
    err = " error" if tr.get("is_error") else ""
    bits = [f'<div class="step {_e(kind)}{err}" id="run-{rid}-step-{_e(st.get("index"))}">'
            f'<span class="muted">#{_e(st.get("index"))} {_e(kind)}</span>']
    if st.get("content"):
        bits.append(f"\n{_e(st['content'])}")
    for c in st.get("tool_calls") or ():
        args = c.get("args")
        bits.append(f"\n&#8594; <code>{_e(c.get('name'))}</code>"
                    f"({_e(args if isinstance(args, str) else json.dumps(args, ensure_ascii=False))})")
    if tr:
        cls = ' class="err"' if tr.get("is_error") else ""
        out = tr.get("output")
        bits.append(f"\n<span{cls}>&#8592; <code>{_e(tr.get('name'))}</code>: "
                    f"{_e(out if isinstance(out, str) else json.dumps(out, ensure_ascii=False))}</span>")
    bits.append("</div>")
    return "".join(bits)


def run_detail(r: RunResult) -> str:
    """One run's drill-down as a ``details`` element ``#run-<id>`` (closed; opened by a
    click, or by the script when a link points at it)."""
    rid = _slug(r.run_id)
    v = verdict(r)
    rs = reasons(r)
    h = [f'<details class="run-detail v-{v}" id="run-{rid}" data-run="{_e(r.run_id)}"><summary>'
         f'<span class="badge {v}">{VERDICT_LABEL[v]}</span> run <b>{_e(r.run_id)}</b> '
         f'(case {_e(r.case_id)}{"" if r.trial is None else f", trial {_e(r.trial)}"}) '
         f'<span class="muted">F1 {fmt(r.f1)} &middot; composite {fmt(r.composite)} &middot; '
         f'{r.steps} steps &middot; {r.n_calls} calls</span></summary><div class="detail-body">']
    h.append('<h4>Why</h4><ol class="reasons">' + "".join(f"<li>{_e(x)}</li>" for x in rs) + "</ol>")
    viol = violations(r)
    if viol:
        h.append('<h4>Rule violations</h4><ul class="violations">'
                 + "".join(f"<li>{_e(x)}</li>" for x in viol) + "</ul>")
    if false_claim(r):
        fr = ""
        for st in reversed(r.transcript or ()):
            if st.get("kind") in ("final_response", "assistant") and st.get("content"):
                fr = str(st["content"])
                break
        h.append('<div class="warning false-claim"><strong>False success claim:</strong> the final '
                 "response claims the action happened, but the task failed"
                 + (f"<blockquote>{_e(fr[:600])}</blockquote>" if fr else "") + "</div>")
    h.append("<h4>Expected calls beside the calls made</h4>")
    h.append(calls_table(r))
    if r.transcript:
        h.append(f"<details class=\"steps\"><summary>{len(r.transcript)} steps with their results"
                 "</summary>")
        h.extend(_step_html(rid, st) for st in r.transcript)
        h.append("</details>")
    h.append("</div></details>")
    return "".join(h)


def run_details(runs: Sequence[RunResult]) -> str:
    """Every run's drill-down, in run order."""
    return "".join(run_detail(r) for r in runs)


__all__ = ["case_grid", "calls_table", "false_claim", "reason_kind", "reasons", "run_detail",
           "run_details", "runs_controls", "runs_table", "verdict", "violations"]
