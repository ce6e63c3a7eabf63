"""A scripted simulated user for the help-desk scenarios (scenarios.yaml), no model needed.

``trajcheck run --scenarios examples/helpdesk/scenarios.yaml --user-model
examples/helpdesk/users.py:scripted_user`` plays it against an agent. It reads what
``trajcheck.run.simulate`` sends a user model (the instructions, then the conversation with the
agent's lines as ``user`` turns) and answers deterministically:

1. the agent confirmed the work (it opened, updated or closed a ticket): the user is done
   and writes ``###STOP###``;
2. the agent asked for something the user knows (a hidden fact whose name, ``_`` read as a
   space, appears in the agent's last message): the user answers with those facts' values,
   word for word;
3. anything else: the user gives up (``###GIVE_UP###``).

A real model plugs in the same way: ``--user-model openai:MODEL@BASE_URL`` (see docs/judges.md).
"""

from __future__ import annotations

import re

from trajcheck.judges import ScriptedModel
from trajcheck.run import GIVE_UP_MARKER, STOP_MARKER

_DONE = re.compile(r"\b(opened ticket INC-\d+|Updated INC-\d+|INC-\d+ is now closed)\b")
_FACTS_HEADER = "Facts you know but give ONLY when the agent asks for them:"


def hidden_facts(system_prompt: str) -> dict[str, str]:
    """The ``name: value`` lines listed under the facts header of the user's instructions."""
    facts: dict[str, str] = {}
    lines = system_prompt.splitlines()
    if _FACTS_HEADER not in lines:
        return facts
    for line in lines[lines.index(_FACTS_HEADER) + 1:]:
        if not line.startswith("- "):
            break
        name, sep, value = line[2:].partition(": ")
        if sep:
            facts[name] = value
    return facts


def helpdesk_user(messages: list[dict[str, str]]) -> str:
    """The user's next message, from the messages a user model receives (see the module doc)."""
    facts = hidden_facts(messages[0]["content"])
    agent_lines = [m["content"] for m in messages[1:] if m["role"] == "user"]
    said = [m for m in messages[1:] if m["role"] == "assistant"]
    if not said:  # asked for the opening message (the scenarios give one, so this is rare)
        return "Hi, I need help with a ticket."
    last = agent_lines[-1] if agent_lines else ""
    if _DONE.search(last):
        return f"Great, thanks. {STOP_MARKER}"
    low = last.lower()
    asked = [v for k, v in facts.items() if k.replace("_", " ").lower() in low]
    if asked:
        return " ".join(asked)
    return f"That doesn't help me. {GIVE_UP_MARKER}"


def scripted_user() -> ScriptedModel:
    """The ``--user-model`` factory: a ``ScriptedModel`` answering with :func:`helpdesk_user`."""
    return ScriptedModel(helpdesk_user)
