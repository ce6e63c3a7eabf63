"""What a CI system shows of a scorecard besides JUnit XML: the GitHub Actions job summary,
workflow-command annotations for failing cases, and GitLab's code-quality report.

Traces may hold customer data and text an attacker wrote, and a CI turns some text into
commands (``::set-output``, ``::add-mask``, ``::stop-commands``) or shows it to everyone who
can read the build. So every reason here is cut (``ANNOTATION_CHARS``, ``SUMMARY_CHARS``),
control characters are written as escapes (``textsafe.visible``), and what GitHub would read
as workflow-command syntax is escaped: ``%``, ``\\r``, ``\\n`` in a message as ``%25``,
``%0D``, ``%0A`` (GitHub's own encoding, so an annotation is one line and no text in it
starts a command), ``:`` and ``,`` in a property as ``%3A``, ``%2C``, and ``::`` in a message
as ``: :`` (it cannot start a command mid-line, but it reads like one in the raw log).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..textsafe import visible
from .scorecard import RunResult, Scorecard

ANNOTATION_CHARS = 300  # one annotation's reason
SUMMARY_CHARS = 300  # one reason in the job summary
ANNOTATIONS_MAX = 50  # GitHub shows 50 annotations of a job at most (10 errors a step)
SUMMARY_MAX_BYTES = 1_000_000  # GitHub refuses a step summary over 1 MiB


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[: max(n - 3, 0)].rstrip() + "..."


def gh_message(text: Any, limit: int = ANNOTATION_CHARS) -> str:
    """Text for the message of a GitHub workflow command: cut to ``limit`` characters,
    control characters as escapes, then ``%``, ``\\r``, ``\\n`` encoded and ``::`` broken.

    Args:
        text: any value (``str()`` of it).
        limit: the most characters of the text kept (before encoding).

    Returns:
        One line that GitHub shows as the text and never runs.
    """
    t = _cut(visible(text), limit)
    t = t.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    while "::" in t:
        t = t.replace("::", ": :")
    return t


def gh_property(text: Any, limit: int = 200) -> str:
    """Text for a property of a GitHub workflow command (``title=``, ``file=``):
    ``gh_message`` with ``:`` and ``,`` encoded too.

    Args:
        text: any value.
        limit: the most characters kept.

    Returns:
        The encoded property value.
    """
    return gh_message(text, limit).replace(":", "%3A").replace(",", "%2C")


def failing_cases(sc: Scorecard) -> list[tuple[str, list[RunResult], int]]:
    """The cases with at least one failed run, in case order, as ``(case id, failed runs in
    trial order, trials listed)``.

    Args:
        sc: the scorecard.

    Returns:
        The failing cases.
    """
    runs: dict[str, list[RunResult]] = {}
    for r in sc.runs:
        runs.setdefault(r.case_id, []).append(r)
    out = []
    for cid, rs in runs.items():
        bad = sorted((r for r in rs if not r.success),
                     key=lambda r: (r.trial is None, r.trial or 0))
        if bad:
            out.append((cid, bad, len(rs)))
    return out


def _first_reason(r: RunResult) -> str:
    return str(r.failure_reason or r.outcome_reason or "task failed")


def github_annotations(sc: Scorecard, *, file: str | None = None,
                       limit: int = ANNOTATIONS_MAX) -> list[str]:
    """``::error`` workflow commands, one per failing case (its first failed run's reason),
    then a ``::notice`` naming how many failing cases were left out past ``limit``.

    Args:
        sc: the scorecard.
        file: a repository path to attach the annotations to (e.g. the traces file), or None.
        limit: the most ``::error`` lines.

    Returns:
        The lines, each safe to print on a GitHub Actions runner.
    """
    cases = failing_cases(sc)
    where = f"file={gh_property(file)}," if file else ""
    out = []
    for cid, bad, n in cases[:limit]:
        first = bad[0]
        trial = first.trial if first.trial is not None else "?"
        title = gh_property(f"trajcheck: case {cid} failed {len(bad)} of {n} trials")
        out.append(f"::error {where}title={title}::"
                   + gh_message(f"case {cid} trial {trial}: {_first_reason(first)}"))
    if len(cases) > limit:
        out.append(f"::notice title=trajcheck::{len(cases) - limit} more failing cases not "
                   "annotated; the JUnit XML and the job summary list them")
    return out


def gitlab_codequality(sc: Scorecard, *, path: str) -> list[dict[str, Any]]:
    """GitLab's code-quality report (a JSON list): one ``major`` issue per failing case at
    ``path`` line 1, its description the first failed run's reason (cut, escaped), its
    fingerprint the MD5 of the case id (stable across pipelines, as GitLab compares them).

    Args:
        sc: the scorecard.
        path: the repository path the issues point to (e.g. the traces or cases file).

    Returns:
        The report's entries.
    """
    out = []
    for cid, bad, n in failing_cases(sc):
        first = bad[0]
        out.append({
            "description": _cut(visible(f"case {cid}: failed {len(bad)} of {n} trials; trial "
                                        f"{first.trial}: {_first_reason(first)}"),
                                ANNOTATION_CHARS).replace("\n", " ").replace("\r", " "),
            "check_name": "trajcheck.task_failed",
            "fingerprint": hashlib.md5(f"trajcheck:{cid}".encode(), usedforsecurity=False).hexdigest(),
            "severity": "major",
            "location": {"path": path, "lines": {"begin": 1}},
        })
    return out


def write_gitlab_codequality(sc: Scorecard, out: str | Path, *, path: str) -> None:
    """Write ``gitlab_codequality(sc, path=path)`` as JSON to ``out``.

    Args:
        sc: the scorecard.
        out: the file to write.
        path: as ``gitlab_codequality``.
    """
    Path(out).write_text(json.dumps(gitlab_codequality(sc, path=path), indent=2) + "\n",
                         encoding="utf-8")


def step_summary(sc: Scorecard) -> str:
    """The Markdown scorecard for a job summary: ``report.to_markdown`` with every reason
    cut at ``SUMMARY_CHARS``, the whole cut to fit GitHub's 1 MiB.

    Args:
        sc: the scorecard.

    Returns:
        The Markdown text, ending in a newline.
    """
    from .text import to_markdown

    text = to_markdown(sc, reason_chars=SUMMARY_CHARS) + "\n"
    data = text.encode("utf-8")
    if len(data) > SUMMARY_MAX_BYTES:
        text = data[: SUMMARY_MAX_BYTES - 100].decode("utf-8", "ignore") + "\n\n(summary cut)\n"
    return text


def append_step_summary(sc: Scorecard, environ: Mapping[str, str] | None = None) -> str | None:
    """Append ``step_summary(sc)`` to the file ``GITHUB_STEP_SUMMARY`` names, when set.

    Args:
        sc: the scorecard.
        environ: the environment to read (default ``os.environ``).

    Returns:
        The file appended to, or None when the variable is unset or empty.
    """
    env = os.environ if environ is None else environ
    target = env.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    with open(target, "a", encoding="utf-8") as f:
        f.write(step_summary(sc))
    return target


def append_gate_summary(verdict: Any, environ: Mapping[str, str] | None = None) -> str | None:
    """Append the regression gate's verdict (``gate.GateVerdict``) to the file
    ``GITHUB_STEP_SUMMARY`` names, when set: a heading and one list item per reason (cut,
    escaped for Markdown).

    Args:
        verdict: the gate's verdict.
        environ: the environment to read (default ``os.environ``).

    Returns:
        The file appended to, or None when the variable is unset or empty.
    """
    from ..textsafe import md

    env = os.environ if environ is None else environ
    target = env.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    d = verdict.delta
    head = "FAILED" if verdict.failed else "passed"
    lines = [f"## trajcheck regression gate: {head}", "",
             f"{md(verdict.figure)}: baseline {d.get('a')}, now {d.get('b')}, "
             f"delta {d.get('delta')} (p = {d.get('p_value')}, level {verdict.level:g})", ""]
    lines += [f"- {md(_cut(r, SUMMARY_CHARS))}" for r in verdict.reasons]
    with open(target, "a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n\n")
    return target


__all__ = ["ANNOTATIONS_MAX", "append_gate_summary", "ANNOTATION_CHARS", "SUMMARY_CHARS", "append_step_summary",
           "failing_cases", "gh_message", "gh_property", "github_annotations",
           "gitlab_codequality", "step_summary", "write_gitlab_codequality"]
