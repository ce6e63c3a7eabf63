"""The run file ``run_suite`` appends to: ``read_runs`` reads the runs recorded in it (for
resume), checking each line's signature, and ``RunWriter`` appends one signed JSON line per run
under an exclusive lock."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import AgentError, TrajcheckError
from ..model import Trajectory
from ..read import limits
from .agent_return import describe_error

__all__ = ["RecordedRuns", "RunWriter", "read_runs"]


@dataclass(frozen=True)
class RecordedRuns:
    """What ``read_runs`` found in an out file: ``runs`` keyed by ``(case_id, trial)`` (the
    first record of a pair wins), ``problems`` (line-numbered), the byte offset ``good_end``
    up to which the file is whole lines, and whether the last line was truncated."""

    runs: dict[tuple[str, int], Trajectory]
    problems: tuple[str, ...] = ()
    good_end: int = 0
    truncated: bool = False


def read_runs(path: str | os.PathLike[str], key: bytes | None = None) -> RecordedRuns:
    """Read a run file written by ``run_suite`` (one ``Trajectory.to_dict()`` per line).

    With ``key`` (the run file's, ``record_mac.load_key``) every line must carry a
    ``trajcheck_mac`` that checks: a line that does not (appended by an agent, edited, or
    from another tool) is reported with its line number and left out, so its run is redone.

    A last line without its newline (a run killed mid-write) is reported as truncated and
    left out; a line that is not JSON, not a trajectory, or lacks ``metadata.case_id`` /
    an integer ``metadata.trial`` is reported (with its line number) and left out; a second
    record of the same (case_id, trial) is reported and left out. A missing file reads as
    empty. Raises TrajcheckError when the file exists but cannot be read.
    """
    p = Path(path)
    if not p.exists():
        return RecordedRuns({})
    try:
        data = p.read_bytes()
    except OSError as e:
        raise TrajcheckError(f"{p}: cannot read the run file ({e})") from e
    runs: dict[tuple[str, int], Trajectory] = {}
    problems: list[str] = []
    end = data.rfind(b"\n") + 1
    truncated = end < len(data) and bool(data[end:].strip())
    if truncated:
        last = data.count(b"\n", 0, end) + 1
        problems.append(f"{p}: line {last} is truncated (run interrupted mid-write); dropped and redone")
    for ln, raw in enumerate(data[:end].split(b"\n")[:-1], start=1):
        if not raw.strip():
            continue
        if key is not None:
            from .record_mac import check_line

            why = check_line(key, raw)
            if why is not None:
                problems.append(f"{p}: line {ln}: {why}; refused")
                continue
        notes: list[str] = []
        try:
            obj = limits.loads(raw, notes)
            if not isinstance(obj, dict) or not isinstance(obj.get("steps"), list):
                raise ValueError("not a trajcheck trajectory (no 'steps' list)")
            t = Trajectory.from_dict(obj)
        except Exception as e:  # whatever the line holds, it is one unreadable record
            problems.append(f"{p}: line {ln}: unreadable run record ({describe_error(e)}); ignored")
            continue
        t, figs = limits.clean_figures(t)
        problems.extend(f"{p}: line {ln}: {n}" for n in [*notes, *figs])
        cid, trial = t.metadata.get("case_id"), t.metadata.get("trial")
        if cid is None or isinstance(trial, bool) or not isinstance(trial, int):
            problems.append(f"{p}: line {ln}: run record without metadata.case_id / integer "
                            "metadata.trial; ignored")
            continue
        pair = (str(cid), trial)
        if pair in runs:
            problems.append(f"{p}: line {ln}: second record of case {cid!r} trial {trial}; ignored")
            continue
        runs[pair] = t
    return RecordedRuns(runs, tuple(problems), end, truncated)


def _lock(fd: int, path: Path) -> None:
    """An exclusive lock on the out file for this process's run (POSIX ``flock``), so two
    ``run``s on one ``--out`` cannot interleave their lines: the second is refused."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock, one writer per file is on the user
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        os.close(fd)
        raise AgentError(f"{path}: another trajcheck run is writing this file; refused (wait for it to "
                         "finish, or use another --out)") from e


def _json_line(traj: Trajectory) -> bytes:
    """One standard-JSON object in UTF-8 for a run (no newline), whatever its values:
    anything JSON cannot hold (NaN, lone surrogates, cycles, objects) is normalised by
    ``limits.scrub``."""
    d = traj.to_dict()
    try:
        return json.dumps(d, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, TypeError, RecursionError, UnicodeEncodeError):
        return json.dumps(limits.scrub(d), ensure_ascii=False, allow_nan=False).encode("utf-8")


class RunWriter:
    """Appends one JSON line per run with a single ``os.write`` followed by ``fsync``, holding
    an exclusive lock on the file (a second writer is refused); each line signed with the run
    file's key (``record_mac``: made with a new file, read from ``<out>.key`` for an existing
    one). Raises AgentError for a file holding records but no key file."""

    def __init__(self, path: Path, good_end: int | None = None) -> None:
        from . import record_mac

        path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        _lock(self.fd, path)
        self.path = path
        try:
            key = record_mac.load_key(path)
            if key is None:
                if os.fstat(self.fd).st_size > 0 and Path(path).read_bytes().strip():
                    raise AgentError(f"{path}: holds records but no key file ({record_mac.key_path(path)}): it was "
                                     "written by an older trajcheck or another tool, or its key was deleted, so "
                                     "its records cannot be told from forged ones; use another --out")
                key = record_mac.new_key(path)
        except BaseException:
            os.close(self.fd)
            raise
        self.key = key

    def truncate_to(self, good_end: int) -> None:
        """Cut a truncated last line (a run killed mid-write) before appending."""
        if os.fstat(self.fd).st_size > good_end:
            os.ftruncate(self.fd, good_end)

    def write(self, traj: Trajectory) -> None:
        from .record_mac import sign

        b = sign(self.key, _json_line(traj))
        n = 0
        while n < len(b):
            n += os.write(self.fd, b[n:])
        os.fsync(self.fd)

    def close(self) -> None:
        os.close(self.fd)

