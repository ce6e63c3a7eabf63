"""A class-data archive (dynamic AppCDS, JDK 13+) for the Spark driver JVM that
``trajcheck eval --engine spark`` starts.

A local Spark session spends most of its start loading and verifying the classes of
Spark's jars: on a 2-core host about 4.5 s to a ready session, taking CPU from the case
load that runs meanwhile. With an archive of those classes (``-XX:SharedArchiveFile``)
the JVM maps them ready-parsed and the session is ready in about 2.2 s. The first lean
session on a machine (``spark.session(lean=True)``) writes the archive instead
(``-XX:ArchiveClassesAtExit``): when that process ends, it stops the session and waits for
the JVM to write it (about 10 s, once; about 110 MB), then moves it into place with its
record beside it (below), so no JVM ever maps a half-written, cut or changed file.
``prepare()`` does the same ahead of time. A JVM that
fails to start with an archive (a damaged file makes it crash) has the archive set aside,
and the session starts again without it.

The JVM checks that an archive matches its own build, options and class path, and starts
as usual without a usable one; the archive's name is keyed by the java binary and
pyspark's version, so an upgrade writes a new archive. A JVM that could not write one
leaves a ``.failed`` marker, and later sessions start without an archive.

Trust: the cache directory may be shared (``TRAJCHECK_CACHE_DIR``) or restored from a CI
cache, and an archive the JVM maps is code. So before an archive is mapped (``check``):
the cache directory must be this user's and writable by no one else, and every directory on
the way to it (links followed) this user's or root's and writable by no one else unless
sticky (``safe_dir``: else no archive at all); the archive is opened without following
links and must be a regular file of this user's that group and others cannot write, and is
hashed (SHA-256, about 0.15 s for 110 MB) and checked against the record written beside it
when it was moved into place (``<name>.record``: size, digest and an HMAC of both under a
key of this user's kept outside the cache, ``$XDG_STATE_HOME/trajcheck/cache.key``, else
``~/.local/state/trajcheck/cache.key``, 0600). An archive that fails any check -- poisoned,
planted, a link, open to others, written under another key (another user, another machine,
a restored CI cache) or by a trajcheck before records -- is never mapped: it is set aside as
``<name>.jsa.bad``, a one-line warning on stderr says why, the session starts without it,
and a new archive is written when the process ends. Records, the key and markers are written
to a fresh name and renamed (linked) into place, never opened through a link planted at
their name.

Where: ``$TRAJCHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/trajcheck``, else
``~/.cache/trajcheck``. ``TRAJCHECK_SPARK_CDS=0`` (or false, no, off) turns the archive off;
any value but these and 1, true, yes, on is an ``EngineError``.
"""

from __future__ import annotations

import atexit
import errno
import hashlib
import hmac
import os
import secrets
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the JVM's CDS messages (a mismatched archive is skipped quietly; the dump lists the
#: classes it cannot archive)
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
DUMP_WAIT_S = 180.0  # the longest the first session's process waits for the JVM's dump


def cache_dir() -> Path:
    """The directory of trajcheck's caches (module docstring)."""
    d = os.environ.get("TRAJCHECK_CACHE_DIR")
    if d:
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "trajcheck"


_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")


def _switch() -> bool:
    """``TRAJCHECK_SPARK_CDS`` (unset: on). Raises ``EngineError`` for a value that is
    neither on nor off, rather than guess."""
    v = os.environ.get("TRAJCHECK_SPARK_CDS", "1").strip().lower()
    if v not in _ON + _OFF:
        from ..errors import EngineError

        raise EngineError(f"TRAJCHECK_SPARK_CDS={v!r}: expected one of "
                          f"{', '.join(_ON + _OFF)}")
    return v in _ON


def _java() -> str | None:
    """The java binary Spark's launcher runs (``$JAVA_HOME/bin/java``, else PATH's)."""
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(found) if found and os.path.exists(found) else None


def archive_path(jvm_options: str) -> Path | None:
    """Where the archive for this java, pyspark and the JVM options ``jvm_options`` lives;
    None when the archive is turned off or there is no java."""
    if not _switch():
        return None
    java = _java()
    if java is None:
        return None
    try:
        import pyspark
    except ImportError:
        return None
    st = os.stat(java)
    key = "\n".join([java, str(st.st_size), str(st.st_mtime_ns), pyspark.__version__,
                     os.path.dirname(os.path.realpath(pyspark.__file__)), jvm_options])
    return cache_dir() / f"spark-driver-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"


@dataclass(frozen=True)
class Plan:
    """What a driver JVM started with some options does about the archive: ``extra`` JVM
    options to add, the archive it maps (``maps``) or the file it writes one to at its
    exit (``writes``, a temporary name that ``finish`` moves into place)."""

    extra: str = ""
    maps: Path | None = None
    writes: Path | None = None
    #: why there is no archive, when the reason is one a user should hear (an unsafe cache)
    note: str | None = None


def plan(jvm_options: str) -> Plan:
    """The ``Plan`` of a driver JVM started with ``jvm_options``.

    Maps the archive when it exists and passes ``check``; one that fails is set aside
    (``<name>.jsa.bad``) and a new one is written instead, as when there is none, unless an
    earlier attempt failed (``.failed``). ``note`` says why no archive is mapped when a user
    should hear it (an unsafe cache directory or key, an archive that failed its check).

    Args:
        jvm_options: the driver JVM's options (they key the archive's name).

    Returns:
        The plan; an empty one when the archive is turned off or there is no java.

    Raises:
        EngineError: ``TRAJCHECK_SPARK_CDS`` is neither on nor off.
    """
    final = archive_path(jvm_options)
    if final is None:
        return Plan()
    problem = safe_dir(final.parent, "cache directory")
    if problem is not None:
        return Plan(note=f"Spark class-data archive not used: {problem}")
    note = None
    if os.path.lexists(final):
        why = check(final)
        if why is None:
            # a JVM crashing on a damaged archive writes its report beside it, not in the
            # working directory
            err = final.parent / "hs_err_pid%p.log"
            return Plan(f"-XX:SharedArchiveFile={final} {QUIET} -XX:ErrorFile={err}",
                        maps=final)
        note = f"Spark class-data archive {final} not mapped: {why}; {_set_aside(final)}"
    if os.path.lexists(final.with_suffix(".failed")):
        return Plan(note=note)
    try:
        _key()
    except _Unsafe as e:
        return Plan(note=note or f"Spark class-data archive not used: {e}")
    # a name nobody can guess ahead, for the JVM to write to
    tmp = final.with_name(f"{final.name}.{os.getpid()}.{secrets.token_hex(8)}.tmp")
    return Plan(f"-XX:ArchiveClassesAtExit={tmp} {QUIET}", writes=tmp, note=note)


class _Unsafe(Exception):
    """A file or directory that must not be trusted; the message says why."""


#: open without following a link at the name, nor hanging on a FIFO planted there
_OPEN_RO = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK


def _dirs_on_path(d: Path) -> list[Path]:
    """Every directory resolving ``d`` reads a name from, then ``d``'s own target, last:
    whoever can change one of them can swap what ``d`` names."""
    rest = list((Path.cwd() / d).parts[1:])
    cur, out, links = Path("/"), [Path("/")], 0
    while rest:
        name = rest.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            cur = cur.parent
            continue
        nxt = cur / name
        if nxt.is_symlink():
            links += 1
            if links > 40:
                raise OSError(errno.ELOOP, "too many levels of symbolic links", str(d))
            target = Path(os.readlink(nxt))
            if target.is_absolute():
                cur = Path("/")
                rest = list(target.parts[1:]) + rest
            else:
                rest = list(target.parts) + rest
            continue
        cur = nxt
        out.append(cur)
    return out


def safe_dir(d: Path, what: str) -> str | None:
    """Whether only this user (and root) can change what is in directory ``d``.

    ``d`` is made (0700) when missing; it must be a directory of this user's that group and
    others cannot write, and every directory on the way to it (links followed) must belong
    to this user or root and be writable by no one else, or have the sticky bit (``/tmp``).

    Args:
        d: the directory.
        what: what ``d`` is, for the message ("cache directory").

    Returns:
        None when it is safe, else one line saying what is wrong.
    """
    uid = os.geteuid()
    try:
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
        dirs = _dirs_on_path(d)
        for p in dirs:
            st = os.lstat(p)
            mode = stat.S_IMODE(st.st_mode)
            if p == dirs[-1]:
                if not stat.S_ISDIR(st.st_mode):
                    return f"{what} {d} is not a directory"
                if st.st_uid != uid:
                    return f"{what} {d} belongs to uid {st.st_uid}, not to this user ({uid})"
                if mode & 0o022:
                    return f"{what} {d} is writable by group or others (mode {mode:o})"
            elif st.st_uid not in (uid, 0):
                return f"{what} {d}: {p} on its path belongs to uid {st.st_uid} (not this user)"
            elif mode & 0o022 and not mode & stat.S_ISVTX:
                return (f"{what} {d}: {p} on its path is writable by group or others "
                        f"(mode {mode:o}, no sticky bit)")
    except OSError as e:
        return f"{what} {d}: {e.strerror or e}"
    return None


def key_path() -> Path:
    """The file of this user's key for cache records (module docstring).

    Returns:
        ``$XDG_STATE_HOME/trajcheck/cache.key``, else ``~/.local/state/trajcheck/cache.key``.
    """
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                             "state")
    return Path(base) / "trajcheck" / "cache.key"


def _not_own(st: os.stat_result, what: str, private: bool = False) -> str | None:
    """Why an open file must not be trusted (not a regular file of this user's, writable by
    group or others; with ``private``, readable by them), or None."""
    mode = stat.S_IMODE(st.st_mode)
    if not stat.S_ISREG(st.st_mode):
        return f"{what} is not a regular file"
    if st.st_uid != os.geteuid():
        return f"{what} belongs to uid {st.st_uid}, not to this user ({os.geteuid()})"
    if mode & (0o077 if private else 0o022):
        return f"{what} is open to group or others (mode {mode:o})"
    return None


def _open(path: Path, what: str) -> int:
    """``path`` opened for reading without following a link; raises ``_Unsafe`` (a link
    there, or unreadable) or ``FileNotFoundError``."""
    try:
        return os.open(path, _OPEN_RO)
    except FileNotFoundError:
        raise
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _Unsafe(f"{what} is a symbolic link (not followed)") from e
        raise _Unsafe(f"{what} cannot be read ({e.strerror})") from e


def _key() -> bytes:
    """This user's record key, made on first use (an atomic link of a full 0600 file).

    Raises ``_Unsafe`` when its directory or file is not safe (another user's, open to
    others, a link) or it cannot be made."""
    p = key_path()
    problem = safe_dir(p.parent, "key directory")
    if problem is not None:
        raise _Unsafe(problem)
    if not os.path.lexists(p):
        try:
            _write_new(p, secrets.token_hex(32), replace=False)
        except FileExistsError:
            pass  # another process made it first: use that one
        except OSError as e:
            raise _Unsafe(f"key file {p} cannot be made ({e.strerror})") from e
    try:
        fd = _open(p, f"key file {p}")
    except FileNotFoundError as e:
        raise _Unsafe(f"key file {p} is missing") from e
    with os.fdopen(fd, "rb") as f:
        problem = _not_own(os.fstat(fd), f"key file {p}", private=True)
        if problem is not None:
            raise _Unsafe(problem)
        key = f.read(256).strip()
    if len(key) < 32:
        raise _Unsafe(f"key file {p} holds no key (under 32 bytes)")
    return key


def _mac(key: bytes, name: str, size: int, digest: str) -> str:
    return hmac.new(key, f"{name}\n{size}\n{digest}".encode(), hashlib.sha256).hexdigest()


def _digest_of(fd: int) -> str:
    h = hashlib.sha256()
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            return h.hexdigest()
        h.update(b)


def check(final: Path) -> str | None:
    """Why the archive at ``final`` must not be mapped, or None when it may be.

    It may when it is a regular file of this user's that group and others cannot write
    (not a link) whose size and SHA-256 digest are the ones in its record
    (``<name>.record``, likewise this user's), and the record's HMAC checks under this
    user's key (so a record from another user or machine does not).

    Args:
        final: the archive's path.

    Returns:
        None, or one line saying what failed.
    """
    record = final.with_suffix(".record")
    try:
        key = _key()
        try:
            fd = _open(record, f"its record {record.name}")
        except FileNotFoundError:
            return f"it has no record ({record.name}; not written by this trajcheck)"
        with os.fdopen(fd, "rb") as f:
            problem = _not_own(os.fstat(fd), f"its record {record.name}")
            if problem is not None:
                return problem
            try:
                size_s, digest, mac = f.read(512).decode("ascii").split()
                size = int(size_s)
            except (ValueError, UnicodeDecodeError):
                return f"its record {record.name} is not one trajcheck writes"
        if not hmac.compare_digest(mac, _mac(key, final.name, size, digest)):
            return ("its record is not signed with this user's key (written by another user "
                    "or machine, or changed)")
        try:
            fd = _open(final, "it")
        except FileNotFoundError:
            return "it is gone"
        try:
            st = os.fstat(fd)
            problem = _not_own(st, "it")
            if problem is not None:
                return problem
            if st.st_size != size:
                return f"its size ({st.st_size} bytes) is not the recorded {size}"
            if not hmac.compare_digest(_digest_of(fd), digest):
                return "its SHA-256 digest is not the recorded one (changed since written)"
        finally:
            os.close(fd)
    except _Unsafe as e:
        return str(e)
    except OSError as e:
        return f"it cannot be read ({e.strerror or e})"
    return None


def verified(final: Path) -> bool:
    """Whether the archive at ``final`` may be mapped (``check``).

    Args:
        final: the archive's path.

    Returns:
        True when ``check`` finds nothing wrong.
    """
    return check(final) is None


def _write_new(path: Path, text: str, replace: bool = True) -> None:
    """Write ``text`` to ``path`` through a fresh 0600 file renamed over it (``replace``) or
    linked to its name when it is free (else ``FileExistsError``): a link planted at
    ``path`` is replaced, never written through, and no reader sees a part-written file."""
    tmp = path.with_name(f"{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _set_aside(final: Path) -> str:
    """Move an archive that failed ``check`` (a link: the link itself) to
    ``<name>.jsa.bad``, so it is never mapped and a new one can be written; what was done,
    for the warning."""
    bad = final.with_suffix(".jsa.bad")
    try:
        os.replace(final, bad)
    except OSError as e:
        return f"it could not be set aside ({e.strerror})"
    return f"set aside as {bad.name}"


def discard(archive: Path) -> None:
    """Set aside an archive a JVM failed to start with (a JVM crashes on a damaged archive)
    and mark it failed, so later sessions neither map nor write one.

    Args:
        archive: the archive's path.
    """
    try:
        os.replace(archive, archive.with_suffix(".jsa.bad"))
    except OSError:
        pass
    try:
        _write_new(archive.with_suffix(".failed"), "")
    except OSError:
        pass


def _final(tmp: Path) -> Path:
    return tmp.with_name(tmp.name.split(".jsa.", 1)[0] + ".jsa")


def install(tmp: Path) -> bool:
    """Move the archive a JVM wrote to ``tmp`` into place with its record.

    The record holds the archive's size, SHA-256 digest and an HMAC of both under this
    user's key. A ``.failed`` marker is left instead when ``tmp`` is not a non-empty regular
    file of this user's (a link planted at its name is removed, its target untouched) or
    there is no safe key.

    Args:
        tmp: the file the JVM wrote (``Plan.writes``).

    Returns:
        Whether the archive is in place.
    """
    final = _final(tmp)
    try:
        key = _key()
        fd = _open(tmp, "the dump")
    except (_Unsafe, OSError):
        key, fd = b"", -1
    try:
        st = os.fstat(fd) if fd >= 0 else None
        if st is None or _not_own(st, "the dump") is not None or st.st_size == 0:
            tmp.unlink(missing_ok=True)
            _write_new(final.with_suffix(".failed"), "")
            return False
        os.fchmod(fd, 0o600)
        digest = _digest_of(fd)
        _write_new(final.with_suffix(".record"),
                   f"{st.st_size} {digest} {_mac(key, final.name, st.st_size, digest)}\n")
        os.replace(tmp, final)
        return True
    except OSError:
        return False
    finally:
        if fd >= 0:
            os.close(fd)


def finish(spark: Any, tmp: Path) -> bool:
    """Stop ``spark`` (a session whose JVM writes the archive to ``tmp`` at its exit), end
    its JVM (Spark's gateway exits when its input closes), wait for it, and move the
    archive into place (``install``; a ``.failed`` marker when the JVM failed). Whether
    the archive is there."""
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    try:
        spark.stop()
    finally:
        if proc is not None and proc.stdin is not None:
            try:
                proc.stdin.close()
                proc.wait(timeout=DUMP_WAIT_S)
            except (OSError, subprocess.TimeoutExpired):
                pass
    if proc is None or proc.returncode != 0:
        try:
            tmp.unlink(missing_ok=True)
            _write_new(_final(tmp).with_suffix(".failed"), "")
        except OSError:
            pass
        return False
    return install(tmp)


def warn(p: Plan) -> None:
    """Say on stderr, in one line, why no archive is mapped (``p.note``), when there is a
    reason to.

    Args:
        p: the plan of the JVM about to start.
    """
    if p.note:
        line = "".join(c if c.isprintable() else repr(c)[1:-1] for c in p.note)
        print(f"trajcheck: warning: {line}; the Spark session starts without it",
              file=sys.stderr)


def finish_at_exit(spark: Any, tmp: Path) -> None:
    """``finish(spark, tmp)`` when this process exits."""
    atexit.register(finish, spark, tmp)


def prepare() -> Path | None:
    """Write the archive of ``spark.session(lean=True)``'s JVM now if it is missing (a
    session started in this process, one small job run, the JVM ended): the next lean
    sessions start from it (``python -m trajcheck.engines.jvm_archive``). The archive's
    path, or None when there is none (turned off, no java, or the JVM could not write
    it). Raises ``EngineError`` when this process already runs a Spark session."""
    from pyspark import SparkContext

    from ..errors import EngineError
    from .spark import LEAN_JVM, builder, warm

    final = archive_path(LEAN_JVM)
    if final is None or verified(final):
        return final
    if SparkContext._gateway is not None:
        raise EngineError("jvm_archive.prepare() starts its own Spark session: call it in a "
                          "process without one")
    b, p = builder(1, "trajcheck-prepare", lean=True)
    warn(p)
    s = b.getOrCreate()
    warm(s)
    if p.writes is None:  # a failed attempt's marker
        s.stop()
    else:
        finish(s, p.writes)
    return final if verified(final) else None


if __name__ == "__main__":  # pragma: no cover - a one-line command
    print(prepare() or "no archive (turned off, no java, or the JVM could not write it)")


__all__ = ["Plan", "archive_path", "cache_dir", "check", "discard", "finish", "finish_at_exit", "install",
           "key_path", "plan", "prepare", "safe_dir", "verified", "warn"]
