"""Files that carry their own cases, read together: keeping their case ids apart.

tau-bench and tau2-bench result files name tasks by small ids ("0", "12"), and two files of
different domains (airline, retail) or task-set versions use the same ids for different
tasks. Read from one folder, a run must still be scored against its own file's task.
``qualify`` does that: when any case of a file has the id of an already-read, different
case, every case and run of that file is keyed ``"<file name>/<task id>"`` instead (its
``case_id``, ``run_id`` and, for tau2, ``recorded_task_id``, so the source's own pass^k
stays per file too), and the problem says so. Files whose cases agree with those read
before (the same task set) keep the plain ids and share the cases.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...model import Case, Trajectory

_KEYS = ("case_id", "run_id", "recorded_task_id")


def file_prefix(label: str) -> str:
    """The file name of a location label (``"/x/a.json.gz record 3"`` -> ``"a"``), without
    the ``.json``/``.jsonl``/``.gz`` suffixes."""
    name = Path(label.split(" record ")[0].split(" simulation ")[0]).name
    for sfx in (".gz", ".jsonl", ".ndjson", ".json"):
        name = name.removesuffix(sfx)
    return name


def qualify(cases: Mapping[str, Case], runs: Sequence[tuple[Trajectory, str]],
            known: Mapping[str, Case], label: str
            ) -> tuple[dict[str, Case], list[tuple[Trajectory, str]], str | None]:
    """``(cases, runs, problem)`` of one file, re-keyed when its cases clash with ``known``
    (module docstring); ``problem`` is None when nothing was re-keyed."""
    clash = [cid for cid, c in cases.items() if cid in known and known[cid] != c]
    if not clash:
        return dict(cases), list(runs), None
    pre = file_prefix(label) + "/"
    new_cases = {pre + cid: replace(c, id=pre + cid) for cid, c in cases.items()}
    new_runs: list[tuple[Trajectory, str]] = []
    for t, w in runs:
        meta: dict[str, Any] = dict(t.metadata)
        for k in _KEYS:
            if meta.get(k) is not None:
                meta[k] = pre + str(meta[k])
        new_runs.append((replace(t, metadata=meta), w))
    problem = (f"{label}: its task {clash[0]} differs from the task {clash[0]} of a file read "
               f"before ({len(clash)} such id(s)); this file's cases and runs are keyed "
               f"'{pre}<task id>'")
    return new_cases, new_runs, problem


__all__ = ["file_prefix", "qualify"]
