"""Signed run files: each line ``trajcheck run`` writes carries an HMAC only trajcheck can make.

The key is 32 random bytes, made when a run file is first written and kept beside it in
``<out>.key`` (hex, mode 0600, made with ``O_EXCL``); the sandbox shows that file empty to
agents (``isolation.Isolation.hide``). A line is the record's JSON object with one more key
at its end, ``"trajcheck_mac": "<64 hex>"``: HMAC-SHA256 under the key of the line's bytes
without that key (``{...}`` as written before it was added), so other JSON readers see one
extra field and trajcheck checks the exact bytes it wrote.

How files are told apart (docs/security.md): a run file with a ``.key`` beside it is a
signed trajcheck run file, and every line must carry a MAC that checks; a line that does not
is refused with its line number (``resume`` redoes its run; ``eval`` refuses the file). A
file without a key file is read as any tool's trace file; when its lines carry MACs anyway
(the key was lost or the file copied alone) ``eval`` says the signatures were not checked.
Source: RFC 2104 (HMAC) via the standard library's ``hmac``.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import TrajcheckError

__all__ = ["MAC_FIELD", "FileCheck", "check_file", "check_line", "key_path", "load_key", "new_key", "sign"]

MAC_FIELD = "trajcheck_mac"
_TAIL = re.compile(rb', "trajcheck_mac": "([0-9a-f]{64})"\}\s*$')
_FIELD = re.compile(rb'"trajcheck_mac"\s*:')


def key_path(out: str | os.PathLike[str]) -> Path:
    """Where the key of run file ``out`` is kept: ``<out>.key``."""
    return Path(f"{os.fspath(out)}.key")


def new_key(out: str | os.PathLike[str]) -> bytes:
    """Make the key of a new run file: written to ``<out>.key`` with mode 0600, refusing to
    overwrite anything there. Raises TrajcheckError when the file exists or cannot be made."""
    p = key_path(out)
    key = secrets.token_bytes(32)
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as e:
        raise TrajcheckError(f"{p}: cannot make the run file's key ({e.strerror})") from e
    try:
        os.write(fd, key.hex().encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    return key


def load_key(out: str | os.PathLike[str]) -> bytes | None:
    """The key of run file ``out``, None when it has no key file. Raises TrajcheckError when
    the key file is a link, readable or writable by others than its owner, owned by another
    user, or does not hold a key."""
    p = key_path(out)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as e:
        raise TrajcheckError(f"{p}: cannot read the run file's key ({e.strerror}; a link is refused)") from e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TrajcheckError(f"{p}: the run file's key is not a regular file; refused")
        if st.st_mode & 0o077:
            raise TrajcheckError(f"{p}: the run file's key is open to other users (mode "
                                 f"{stat.S_IMODE(st.st_mode):o}); refused: chmod 600 it if it is yours")
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            raise TrajcheckError(f"{p}: the run file's key belongs to another user (uid {st.st_uid}); refused")
        text = os.read(fd, 200).strip()
    finally:
        os.close(fd)
    try:
        key = bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) != 32:
        raise TrajcheckError(f"{p}: does not hold a run file key (64 hex digits)")
    return key


def _mac(key: bytes, body: bytes) -> str:
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def sign(key: bytes, body: bytes) -> bytes:
    """The line for record ``body`` (one JSON object's bytes, no newline): the object with
    ``"trajcheck_mac"`` added as its last key, and a newline."""
    if not body.endswith(b"}") or body == b"{}":
        raise ValueError("a record is a non-empty JSON object")
    return body[:-1] + b', "trajcheck_mac": "' + _mac(key, body).encode() + b'"}\n'


def check_line(key: bytes, line: bytes) -> str | None:
    """None when ``line`` (without its newline) carries a MAC that checks under ``key``,
    else why not (no MAC, or a MAC that does not match: changed or written by another)."""
    m = _TAIL.search(line)
    if m is None:
        return "not signed by trajcheck (no trajcheck_mac)"
    body = line[: m.start()] + b"}"
    if not hmac.compare_digest(_mac(key, body), m.group(1).decode()):
        return "its trajcheck_mac does not match (changed, or written by something other than this run file's trajcheck)"
    return None


def has_mac(line: bytes) -> bool:
    """True when ``line`` carries a ``trajcheck_mac`` field (checked or not)."""
    return _FIELD.search(line) is not None


@dataclass(frozen=True)
class FileCheck:
    """What ``check_file`` found: whether the file has a key (``signed``), the refused lines
    as ``(line number, why)``, the number of lines that carry a MAC, and the (case_id,
    trial) pairs recorded more than once with their line numbers."""

    signed: bool
    refused: tuple[tuple[int, str], ...] = ()
    n_with_mac: int = 0
    duplicates: tuple[tuple[str, int, tuple[int, ...]], ...] = ()


def check_file(path: str | os.PathLike[str]) -> FileCheck:
    """Check every line of the run file ``path`` against its key (``load_key``); without a key
    file only count the lines that carry a MAC. Duplicated (case_id, trial) pairs are
    listed among the lines that check. Raises TrajcheckError when the file or key cannot be
    read."""
    import json

    key = load_key(path)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise TrajcheckError(f"{path}: cannot read ({e.strerror})") from e
    refused: list[tuple[int, str]] = []
    seen: dict[tuple[str, int], list[int]] = {}
    n_mac = 0
    for ln, raw in enumerate(data.split(b"\n"), start=1):
        line = raw.rstrip(b"\r")
        if not line.strip():
            continue
        if has_mac(line):
            n_mac += 1
        if key is None:
            continue
        why = check_line(key, line)
        if why is not None:
            refused.append((ln, why))
            continue
        try:
            md = json.loads(line).get("metadata") or {}
            pair = (str(md["case_id"]), int(md["trial"]))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        seen.setdefault(pair, []).append(ln)
    dups = tuple((c, t, tuple(lns)) for (c, t), lns in seen.items() if len(lns) > 1)
    return FileCheck(key is not None, tuple(refused), n_mac, dups)


def eval_check(traces: str | os.PathLike[str]) -> tuple[list[str], str | None]:
    """What ``trajcheck eval`` says about TRACES (a file, or a folder of files) before scoring
    it: ``(notes, refusal)``. Each file with a key file is checked (``check_file``): any
    refused line makes ``refusal`` name them (up to ten, with line numbers) and the file is
    not evaluated; duplicated (case, trial) pairs are a note. A file without a key file whose
    first line carries a MAC gets a note that its signatures were not checked; one whose
    lines carry none is read as any tool's traces, with no note."""
    root = Path(traces)
    files = sorted(f for f in root.iterdir() if f.is_file() and not f.name.endswith((".key", ".log"))) \
        if root.is_dir() else [root]
    notes: list[str] = []
    bad: list[str] = []
    for f in files:
        if not key_path(f).exists():
            try:
                with open(f, "rb") as fh:
                    first = fh.readline(1 << 20)
            except OSError:
                continue
            if has_mac(first):
                notes.append(f"{f}: its records carry trajcheck signatures but its key file {key_path(f)} is "
                             "missing: signatures not checked, records taken as they are")
            continue
        res = check_file(f)
        bad.extend(f"{f}: line {ln}: {why}" for ln, why in res.refused)
        for cid, trial, lns in res.duplicates:
            notes.append(f"{f}: case {cid!r} trial {trial} is recorded {len(lns)} times (lines "
                         f"{', '.join(map(str, lns))}); each record is scored")
    if not bad:
        return notes, None
    more = f" (and {len(bad) - 10} more)" if len(bad) > 10 else ""
    return notes, ("refused: record(s) trajcheck did not write, in a signed run file; not evaluated, since "
                   "they would count: " + "; ".join(bad[:10]) + more)
