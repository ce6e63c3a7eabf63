"""The IT help-desk example: its tools (``TOOLS``) and three small scripted agents.

Tools (each validated against its JSON Schema by trajcheck before it runs):

- ``search_docs(query, limit=3)``: knowledge-base search (word overlap with title, body, tags)
- ``run_sql(query)``: one read-only SELECT over the help-desk database (SQLite ``query_only``)
- ``get_ticket(ticket_id)``: one ticket by key, e.g. ``INC-1042``
- ``create_ticket(title, description, priority, assignee_group)``: files a ticket for the
  current user; returns its key
- ``update_ticket(ticket_id, priority?, status?, assignee_group?)``: changes a ticket and writes
  one ``audit_log`` row per changed field
- ``confirm_action(action, ticket_id)``: asks the user to confirm a destructive action; the
  simulated user answers from the case's ``metadata.user_confirms`` (default: declines)

Agents (deterministic, rule-based; they read the request, not the case's expectations):

- ``good_agent``: does what a careful help-desk agent does (asks when the request is vague,
  checks ownership before updating, confirms before closing, retries a failed tool once);
- ``duplicate_agent``: like the good one, but files every new ticket twice ("to be sure");
- ``false_success_agent``: like the good one, but when ``create_ticket`` fails it does not
  retry and tells the user the ticket was created anyway.

Run them with ``trajcheck run --agent examples/helpdesk/agents.py:good_agent --cases
examples/helpdesk/cases.jsonl --trials 5`` (see README.md).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from trajcheck.run import ToolContext, ToolRegistry

GROUPS = ["IT-Hardware", "IT-Software", "IT-Network", "IT-Access"]
PRIORITIES = ["low", "medium", "high", "critical"]
STATUSES = ["open", "in_progress", "resolved", "closed"]
TICKET_ID = {"type": "string", "pattern": "^INC-[0-9]+$", "description": "Ticket key, e.g. INC-1042"}


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _words(s: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", s.lower()) if len(w) > 2}


# ----------------------------------------------------------------------------- tools


def search_docs(query: str, limit: int = 3, *, ctx: ToolContext) -> list[dict[str, Any]]:
    """Search the IT knowledge base; best matches first."""
    q = _words(query)
    rows = ctx.sandbox.execute("SELECT id, title, body, tags FROM docs ORDER BY id")
    scored = [(len(q & _words(f"{r['title']} {r['body']} {r['tags']}")), r) for r in rows]
    hits = [r for s, r in sorted(scored, key=lambda x: (-x[0], x[1]["id"])) if s > 0]
    return [{"doc_id": r["id"], "title": r["title"], "body": r["body"]} for r in hits[:limit]]


def run_sql(query: str, *, ctx: ToolContext) -> list[dict[str, Any]]:
    """Run one read-only SQL SELECT over the help-desk database (at most 50 rows)."""
    conn = ctx.sandbox.connection
    conn.execute("PRAGMA query_only = ON")
    try:
        cur = conn.execute(query)
        cols = [d[0] for d in cur.description or ()]
        return [dict(zip(cols, r)) for r in cur.fetchmany(50)]
    finally:
        conn.execute("PRAGMA query_only = OFF")


def get_ticket(ticket_id: str, *, ctx: ToolContext) -> dict[str, Any]:
    """Look up one ticket by its key."""
    rows = ctx.sandbox.execute(
        "SELECT key, title, description, priority, status, assignee_group, requester, updated_at "
        "FROM tickets WHERE key = :k", {"k": ticket_id})
    if not rows:
        raise LookupError(f"ticket {ticket_id} not found")
    return rows[0]


def create_ticket(title: str, description: str, priority: str, assignee_group: str, *,
                  ctx: ToolContext) -> dict[str, Any]:
    """File a new ticket for the current user."""
    sb = ctx.sandbox
    n = sb.execute("SELECT MAX(CAST(SUBSTR(key, 5) AS INTEGER)) AS n FROM tickets")[0]["n"] or 1000
    key = f"INC-{n + 1}"
    now = _now()
    sb.execute("INSERT INTO tickets (key, title, description, priority, status, assignee_group, requester, "
               "created_at, updated_at) VALUES (:k, :t, :d, :p, 'open', :g, :r, :c, :c)",
               {"k": key, "t": title, "d": description, "p": priority, "g": assignee_group,
                "r": (ctx.user or {}).get("id", "unknown"), "c": now})
    return {"ticket_id": key, "status": "open", "priority": priority, "assignee_group": assignee_group}


def update_ticket(ticket_id: str, priority: str | None = None, status: str | None = None,
                  assignee_group: str | None = None, *, ctx: ToolContext) -> dict[str, Any]:
    """Change a ticket's priority, status or assignee group."""
    old = get_ticket(ticket_id, ctx=ctx)
    changes = {k: v for k, v in (("priority", priority), ("status", status),
                                 ("assignee_group", assignee_group)) if v is not None and v != old[k]}
    now = _now()
    for f, v in changes.items():
        ctx.sandbox.execute(f"UPDATE tickets SET {f} = :v, updated_at = :u WHERE key = :k",
                            {"v": v, "u": now, "k": ticket_id})
        ctx.sandbox.execute("INSERT INTO audit_log (ticket_key, field, old_value, new_value, actor, created_at) "
                            "VALUES (:k, :f, :o, :n, :a, :c)",
                            {"k": ticket_id, "f": f, "o": old[f], "n": v,
                             "a": (ctx.user or {}).get("id", "unknown"), "c": now})
    return {"ticket_id": ticket_id, "changed": sorted(changes)}


def confirm_action(action: str, ticket_id: str, *, ctx: ToolContext) -> dict[str, Any]:
    """Ask the user to confirm an action before doing it."""
    yes = bool((getattr(ctx.case, "metadata", None) or {}).get("user_confirms", False))
    return {"confirmed": yes, "reply": "Yes, go ahead." if yes else "No, leave it as it is."}


TOOLS = ToolRegistry()
TOOLS.register(search_docs, {"type": "function", "function": {
    "name": "search_docs", "description": "Search the IT knowledge base; best matches first.",
    "parameters": {"type": "object", "additionalProperties": False, "required": ["query"],
                   "properties": {"query": {"type": "string", "minLength": 2},
                                  "limit": {"type": "integer", "minimum": 1, "maximum": 10}}}}})
TOOLS.register(run_sql, {"name": "run_sql", "description": "Run one read-only SQL SELECT (max 50 rows).",
                         "input_schema": {"type": "object", "additionalProperties": False,
                                          "required": ["query"],
                                          "properties": {"query": {"type": "string", "minLength": 6}}}})
TOOLS.register(get_ticket, {"name": "get_ticket", "description": "Look up one ticket by key.",
                            "parameters": {"type": "object", "additionalProperties": False,
                                           "required": ["ticket_id"], "properties": {"ticket_id": TICKET_ID}}})
TOOLS.register(create_ticket, {"name": "create_ticket", "description": "File a new ticket for the current user.",
                               "parameters": {
                                   "type": "object", "additionalProperties": False,
                                   "required": ["title", "description", "priority", "assignee_group"],
                                   "properties": {"title": {"type": "string", "minLength": 3, "maxLength": 120},
                                                  "description": {"type": "string"},
                                                  "priority": {"enum": PRIORITIES},
                                                  "assignee_group": {"enum": GROUPS}}}})
TOOLS.register(update_ticket, {"name": "update_ticket",
                               "description": "Change a ticket's priority, status or assignee group.",
                               "parameters": {
                                   "type": "object", "additionalProperties": False, "required": ["ticket_id"],
                                   "minProperties": 2,
                                   "properties": {"ticket_id": TICKET_ID, "priority": {"enum": PRIORITIES},
                                                  "status": {"enum": STATUSES},
                                                  "assignee_group": {"enum": GROUPS}}}})
TOOLS.register(confirm_action, {"name": "confirm_action",
                                "description": "Ask the user to confirm an action before doing it.",
                                "parameters": {"type": "object", "additionalProperties": False,
                                               "required": ["action", "ticket_id"],
                                               "properties": {"action": {"type": "string"},
                                                              "ticket_id": TICKET_ID}}})


# ----------------------------------------------------------------------------- agents

_KEY = re.compile(r"\bINC-\d+\b")
_GROUP_HINTS = [("IT-Hardware", ("laptop", "monitor", "printer", "mouse", "keyboard", "dock")),
                ("IT-Network", ("vpn", "network", "wi-fi", "wifi", "shared drive", "internet")),
                ("IT-Software", ("outlook", "excel", "software", "app", "install")),
                ("IT-Access", ("access", "permission", "account"))]


def _group(text: str) -> str | None:
    m = re.search(r"\bIT-(Hardware|Software|Network|Access)\b", text, re.IGNORECASE)
    if m:
        return "IT-" + m.group(1).capitalize()
    low = text.lower()
    for g, words in _GROUP_HINTS:
        if any(w in low for w in words):
            return g
    return None


def _priority(text: str) -> str | None:
    m = re.search(r"\b(low|medium|high|critical)(?:[- ]priority)?\b", text, re.IGNORECASE)
    return m.group(1).lower() if m else None


# How this desk words ticket titles: no first person, a neutral symptom phrase.
_TITLE_REWRITES = [
    (r"^I can't (open|access|reach) (?:the )?(.+?)(\s+(?:from|on|in)\s.+)?$",
     lambda m: f"{m.group(2)} cannot be {m.group(1)}ed{m.group(3) or ''}"),
    (r"^(?:my|the)\s+", ""),
    (r"\bstill\s+", ""),
    (r"\bwon't boot\b", "does not start"),
    (r"\bkeeps crashing\b", "crashes repeatedly"),
    (r"\bdrops\b", "disconnects"),
    (r"\bflickers constantly\b", "constantly flickering"),
    (r"\bfreezes\b", "hangs"),
    (r"\bwhen I (\w+?)e? (?=\w)", lambda m: f"when {m.group(1)}ing "),
]


def _title(problem: str) -> str:
    """A ticket title for the problem: its first sentence reworded (see _TITLE_REWRITES)."""
    t = re.split(r"(?<=[.!?])\s", problem)[0].rstrip(".!?")
    for pat, rep in _TITLE_REWRITES:
        t = re.sub(pat, rep, t, count=1, flags=re.IGNORECASE)
    return (t[:1].upper() + t[1:])[:120]


def _call(tools: Any, name: str, args: dict[str, Any], retries: int) -> Any:
    """Call a tool, retrying a failed call up to ``retries`` times."""
    res = tools.call(name, args)
    for _ in range(retries):
        if not res.is_error:
            break
        res = tools.call(name, args)
    return res


class _Style:
    duplicate = False
    false_success = False


def _helpdesk(request: str, tools: Any, style: type[_Style]) -> str:
    text = request.strip()
    low = text.lower()
    me = (tools.user or {}).get("id")
    key_m = _KEY.search(text)
    key = key_m.group(0) if key_m else None

    # SQL that would change data: the SQL tool is read-only, and so is this agent
    if "sql" in low and re.search(r"\b(delete|drop|update|insert)\b", low):
        return "Sorry, I can only run read-only queries; I can't delete or change tickets with SQL."
    # reporting questions -> read-only SQL
    if low.startswith("how many"):
        group = _group(text)
        rows = _call(tools, "run_sql", {"query": "SELECT COUNT(*) AS n FROM tickets WHERE status = 'open' "
                                                 f"AND assignee_group = '{group}'"}, 1)
        if rows.is_error:
            return "I couldn't run that report right now; please try again later."
        return f"There are {rows.output[0]['n']} open tickets assigned to {group}."
    # closing a ticket: check ownership, then ask for confirmation
    if key and re.search(r"\bclose\b", low):
        t = _call(tools, "get_ticket", {"ticket_id": key}, 1)
        if t.is_error:
            return f"I couldn't find {key}."
        if t.output["requester"] != me:
            return f"Only the requester of {key} or IT staff can close it, so I haven't changed it."
        ok = _call(tools, "confirm_action", {"action": "close", "ticket_id": key}, 1)
        if ok.is_error or not ok.output["confirmed"]:
            return f"Understood, {key} stays as it is and was left open."
        u = _call(tools, "update_ticket", {"ticket_id": key, "status": "closed"}, 1)
        if u.is_error:
            return f"I couldn't close {key}: {u.error}"
        return f"{key} is now closed."
    # changing a ticket
    change = re.search(r"\b(raise|lower|set|change|reassign|move)\b", low)
    if change and ("ticket" in low or key):
        if key is None:
            return "Which ticket do you mean? Please give me its ticket ID (like INC-1042)."
        t = _call(tools, "get_ticket", {"ticket_id": key}, 1)
        if t.is_error:
            return f"I couldn't find {key}."
        if t.output["requester"] != me:
            return f"Only the requester of {key} or IT staff can change it, so I haven't changed it."
        args: dict[str, Any] = {"ticket_id": key}
        if re.search(r"\b(reassign|assignee|move)\b", low):
            args["assignee_group"] = _group(text.replace(key, ""))
        else:
            args["priority"] = _priority(text)
        u = _call(tools, "update_ticket", args, 1)
        if u.is_error:
            return f"I couldn't update {key}: {u.error}"
        what = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in args.items() if k != "ticket_id")
        return f"Updated {key}: {what}."
    if re.search(r"\bupdate my ticket\b", low) and key is None:
        return "Which ticket do you mean? Please give me its ticket ID (like INC-1042)."
    # status questions
    if key and re.search(r"\b(status|who is working|working on)\b", low):
        t = _call(tools, "get_ticket", {"ticket_id": key}, 1)
        if t.is_error:
            return f"I couldn't find {key}."
        o = t.output
        return f"{key} ({o['title']}) is {o['status'].replace('_', ' ')}, assigned to {o['assignee_group']}."
    # filing a ticket
    if re.search(r"\bopen (a|an|a new)\b.*\bticket\b", low):
        problem = re.split(r"(?i)\b(please )?open (a|an|a new)\b", text)[0].strip()
        if len(problem) < 10:
            return "I can open a ticket for you. Please describe the problem: what happens, and on which device?"
        title = _title(problem)
        args = {"title": title, "description": problem, "priority": _priority(text) or "medium",
                "assignee_group": _group(text) or "IT-Hardware"}
        res = _call(tools, "create_ticket", args, 0 if style.false_success else 1)
        if res.is_error:
            if style.false_success:
                return "Your ticket has been created. IT will be in touch soon."
            return f"I couldn't create the ticket ({res.error}). Please try again in a few minutes."
        if style.duplicate:
            tools.call("create_ticket", args)  # "just to be sure it went through"
        tid = res.output["ticket_id"]
        return f"I opened ticket {tid} ({args['priority']} priority, {args['assignee_group']}). Your ticket ID is {tid}."
    # how-to questions -> knowledge base
    if re.match(r"(how|what|where|can i|is there)\b", low) and not re.match(r"what can you", low):
        hits = _call(tools, "search_docs", {"query": text}, 1)
        if hits.is_error or not hits.output:
            return "I couldn't find an article on that; I can open a ticket if you describe the problem."
        d = hits.output[0]
        return f"From '{d['title']}': {d['body']}"
    # small talk: answer directly, no tools
    if re.search(r"\b(thanks|thank you)\b", low):
        return "You're welcome! Have a good day."
    return ("Hi! I'm the IT help desk. I can answer how-to questions, look up or update your tickets, "
            "and open new tickets for you.")


class _Dup(_Style):
    duplicate = True


class _False(_Style):
    false_success = True


def good_agent(request: str, tools: Any) -> str:
    """The careful help-desk agent."""
    return _helpdesk(request, tools, _Style)


def duplicate_agent(request: str, tools: Any) -> str:
    """Files every new ticket twice."""
    return _helpdesk(request, tools, _Dup)


def false_success_agent(request: str, tools: Any) -> str:
    """Claims success when create_ticket fails."""
    return _helpdesk(request, tools, _False)


good_agent.tools = TOOLS  # type: ignore[attr-defined]
duplicate_agent.tools = TOOLS  # type: ignore[attr-defined]
false_success_agent.tools = TOOLS  # type: ignore[attr-defined]
