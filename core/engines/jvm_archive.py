"""A class-data archive (dynamic AppCDS, JDK 13+) for the Spark driver JVM that
``trajcheck eval --engine spark`` starts.

A local Spark session spends most of its start loading and verifying the classes of
Spark's jars: on a 2-core host about 4.5 s to a ready session, taking CPU from the case
load that runs meanwhile. With an archive of those classes (``-XX:SharedArchiveFile``)
the JVM maps them ready-parsed and the session is ready in about 2.2 s. The first lean
session on a machine (``spark.session(lean=True)``) writes the archive instead
(``-XX:ArchiveClassesAtExit``): when that process ends, it stops the session and waits for
the JVM to write it (about 10 s, once; about 110 MB), then moves it into place with its size noted
beside it, so no JVM ever maps a half-written or cut file. ``prepare()`` does the same ahead of time. A JVM that
fails to start with an archive (a damaged file makes it crash) has the archive set aside,
and the session starts again without it.

The JVM checks that an archive matches its own build, options and class path, and starts
as usual without a usable one; the archive's name is keyed by the java binary and
pyspark's version, so an upgrade writes a new archive. A JVM that could not write one
leaves a ``.failed`` marker, and later sessions start without an archive.

Where: ``$TRAJCHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/trajcheck``, else
``~/.cache/trajcheck``. ``TRAJCHECK_SPARK_CDS=0`` (or false, no, off) turns the archive off;
any value but these and 1, true, yes, on is an ``EngineError``.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
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


def plan(jvm_options: str) -> Plan:
    """The ``Plan`` of a driver JVM started with ``jvm_options``: map the archive when it
    exists; else write it, unless an earlier attempt failed or the cache directory cannot
    be written."""
    final = archive_path(jvm_options)
    if final is None:
        return Plan()
    if final.is_file():
        if _size_ok(final):
            # a JVM crashing on a damaged archive writes its report beside it, not in the
            # working directory
            err = final.parent / "hs_err_pid%p.log"
            return Plan(f"-XX:SharedArchiveFile={final} {QUIET} -XX:ErrorFile={err}",
                        maps=final)
        discard(final)  # cut or replaced since it was written
    if final.with_suffix(".failed").exists():
        return Plan()
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return Plan()
    tmp = final.with_name(f"{final.name}.{os.getpid()}.tmp")
    return Plan(f"-XX:ArchiveClassesAtExit={tmp} {QUIET}", writes=tmp)


def _size_ok(final: Path) -> bool:
    """Whether the archive has the size recorded when it was moved into place (a JVM maps
    a cut archive and crashes on it)."""
    try:
        return int(final.with_suffix(".size").read_text()) == final.stat().st_size
    except (OSError, ValueError):
        return False


def discard(archive: Path) -> None:
    """Set aside a damaged archive (cut, or one a JVM failed to start with: a JVM crashes
    on a damaged archive) and mark it failed, so later sessions start without one."""
    try:
        os.replace(archive, archive.with_suffix(".jsa.bad"))
        archive.with_suffix(".failed").touch()
    except OSError:
        pass


def _final(tmp: Path) -> Path:
    return tmp.with_name(tmp.name.split(".jsa.", 1)[0] + ".jsa")


def finish(spark: Any, tmp: Path) -> bool:
    """Stop ``spark`` (a session whose JVM writes the archive to ``tmp`` at its exit), end
    its JVM (Spark's gateway exits when its input closes), wait for it, and move the
    archive into place (or leave a ``.failed`` marker). Whether the archive is there."""
    final = _final(tmp)
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
    ok = proc is not None and proc.returncode == 0 and tmp.is_file() and tmp.stat().st_size > 0
    try:
        if ok:
            final.with_suffix(".size").write_text(str(tmp.stat().st_size))
            os.replace(tmp, final)
        else:
            tmp.unlink(missing_ok=True)
            final.with_suffix(".failed").touch()
    except OSError:
        return False
    return ok


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
    if final is None or final.is_file():
        return final
    if SparkContext._gateway is not None:
        raise EngineError("jvm_archive.prepare() starts its own Spark session: call it in a "
                          "process without one")
    b, p = builder(1, "trajcheck-prepare", lean=True)
    s = b.getOrCreate()
    warm(s)
    if p.writes is None:  # a failed attempt's marker
        s.stop()
    else:
        finish(s, p.writes)
    return final if final.is_file() else None


if __name__ == "__main__":  # pragma: no cover - a one-line command
    print(prepare() or "no archive (turned off, no java, or the JVM could not write it)")


__all__ = ["Plan", "archive_path", "cache_dir", "discard", "finish", "finish_at_exit", "plan", "prepare"]
