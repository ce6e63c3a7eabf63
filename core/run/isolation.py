"""How an agent worker process is started: the isolation modes, their limits, their command lines.

Three modes (``run_suite(isolation=...)``, ``trajcheck run --isolation``):

- ``sandbox`` (the default where the machine allows it): the worker runs under bubblewrap
  (``bwrap``, Debian's ``bubblewrap`` package), in new user, PID, network, IPC, UTS and cgroup
  namespaces: the whole file system read-only except a scratch ``/tmp`` (a fresh tmpfs), no
  network (its own loopback only) unless ``network=True``, no view of trajcheck's processes
  (``/proc`` is its own PID namespace's), every capability dropped, a new session (no
  terminal), and killed with all its processes when trajcheck dies (``--die-with-parent``;
  the PID namespace ends with its first process). Files that hold trajcheck's secrets (the
  run file's key, paths given as ``hide``) are replaced by empty ones in its view.
- ``process``: an ordinary child process of the same user, in a process group of its own.
  Where the sandbox cannot start (no ``bwrap``, no user namespaces), ``sandbox`` falls back
  to this, and the caller prints which mode ran (``Isolation.describe``).
- ``inline``: no worker; the agent runs in a thread of trajcheck's process.

In both worker modes the worker is started as ``python -I`` (no working folder, no
``PYTHON*`` variables, no user site on its path, so a ``json.py`` in the working folder is
not imported), with its output sent to the runner (``worker_pool`` writes it to the run's
log, capped), and sets its own resource limits (``Limits``: processes, address space, file
size) before it loads the agent; it dies with trajcheck (``PR_SET_PDEATHSIG``, and a watch
pipe whose end of file makes it kill its whole process group). Source:
bubblewrap's manual (``bwrap(1)``).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import AgentError

__all__ = ["ISOLATION_MODES", "Isolation", "Limits", "choose", "pids_cgroup", "remove_cgroup", "sandbox_problem",
           "worker_env"]

ISOLATION_MODES = ("sandbox", "process", "inline")

# environment variables a worker never receives: trajcheck's own settings (the PostgreSQL URL
# with its password among them) and libpq's password and service settings
_SECRET_ENV_PREFIXES = ("TRAJCHECK_", "PGPASS", "PGSERVICE")
_SECRET_ENV_NAMES = frozenset({"PGPASSWORD", "PGPASSFILE", "DATABASE_URL"})


@dataclass(frozen=True)
class Limits:
    """Resource limits a worker sets on itself (soft = hard, so the agent cannot raise them)
    before it loads the agent; its children inherit them. ``processes``: RLIMIT_NPROC (the
    user's processes; in the sandbox, those of its own user namespace); ``memory_mb``:
    RLIMIT_AS, address space per process; ``file_mb``: RLIMIT_FSIZE, the largest file it
    may write. None leaves a limit as it is."""

    processes: int | None = 256
    memory_mb: int | None = 4096
    file_mb: int | None = 256

    def to_wire(self) -> dict[str, int | None]:
        """The limits as the worker's ``hello`` message carries them."""
        return {"processes": self.processes, "memory_mb": self.memory_mb, "file_mb": self.file_mb}


@dataclass(frozen=True)
class Isolation:
    """The isolation a suite runs with: ``mode`` (``sandbox``/``process``/``inline``),
    ``requested`` (what was asked), ``reason`` (why a fallback happened), ``network``
    (sandbox: the host's network shared), ``hide`` (paths the sandbox shows empty) and
    ``limits``."""

    mode: str
    requested: str
    reason: str | None = None
    network: bool = False
    hide: tuple[str, ...] = ()
    limits: Limits = Limits()
    keep: tuple[str, ...] = ()  # folders under /tmp the worker must still see (read-only)

    def describe(self) -> str:
        """One line saying which isolation runs, e.g. for the CLI's stderr."""
        if self.mode == "sandbox":
            net = "the host network" if self.network else "no network"
            return (f"isolation: sandbox (bubblewrap; {net}, read-only files but /tmp, own PID "
                    f"namespace, limits {_show_limits(self.limits)})")
        if self.mode == "process":
            why = f"; the sandbox could not start: {self.reason}" if self.reason else ""
            return (f"isolation: process (a worker process of this user, limits {_show_limits(self.limits)}; "
                    f"it can read this user's files and use the network{why})")
        return "isolation: inline (the agent runs inside trajcheck's process; nothing is isolated)"

    def command(self, python_args: Sequence[str], cgroup: str | None = None) -> list[str]:
        """The argv starting a worker: ``python -I python_args`` (``sys.executable``), under
        bwrap in sandbox mode; with ``cgroup`` (``pids_cgroup``), started by a shell that first
        moves itself into that cgroup, so the worker and every process it starts count
        against its ``pids.max``."""
        py = [sys.executable, "-I", *python_args]
        cmd = py if self.mode != "sandbox" else [*bwrap_args(self.network, self.hide, self.keep), "--", *py]
        if cgroup is None:
            return cmd
        return ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup, *cmd]


def _show_limits(lim: Limits) -> str:
    parts = []
    if lim.processes is not None:
        parts.append(f"{lim.processes} processes")
    if lim.memory_mb is not None:
        parts.append(f"{lim.memory_mb} MB memory")
    if lim.file_mb is not None:
        parts.append(f"{lim.file_mb} MB files")
    return ", ".join(parts) or "none"


def bwrap_args(network: bool, hide: Sequence[str] = (), keep: Sequence[str] = ()) -> list[str]:
    """bwrap's options for a worker: new namespaces (the network shared only with
    ``network``), ``/`` bound read-only, fresh ``/dev``, ``/proc`` and ``/tmp``, the working
    folder kept, capabilities dropped, a new session, death with the parent; the working
    folder and the folders of ``keep`` that lie under ``/tmp`` bound read-only over the fresh
    one (the agent's folder, the import path); each path of ``hide`` shown empty (a file as
    ``/dev/null``, a folder as an empty tmpfs)."""
    exe = shutil.which("bwrap") or "bwrap"
    args = [exe, "--unshare-all", *(["--share-net"] if network else []), "--die-with-parent",
            "--new-session", "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp", "--setenv", "TMPDIR", "/tmp", "--setenv", "HOME", "/tmp"]
    cwd = os.getcwd()
    for k in sorted({os.path.realpath(k) for k in (cwd, *keep) if k}):
        if (k == "/tmp" or k.startswith("/tmp/")) and os.path.isdir(k):
            args += ["--ro-bind", k, k]
    for h in hide:
        p = os.path.realpath(h)
        if os.path.isdir(p):
            args += ["--tmpfs", p]
        elif os.path.lexists(p):
            args += ["--ro-bind", "/dev/null", p]
    return [*args, "--chdir", cwd]


@functools.lru_cache(maxsize=4)
def sandbox_problem(network: bool = False) -> str | None:
    """None when a bubblewrap sandbox starts on this machine (tried once per process and
    network setting: ``bwrap ... python -I -c pass``), else the reason it does not."""
    if not sys.platform.startswith("linux"):
        return f"bubblewrap needs Linux (this is {sys.platform})"
    if shutil.which("bwrap") is None:
        return "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    cmd = [*bwrap_args(network), "--", sys.executable, "-I", "-c", "import trajcheck.run.worker"]
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap could not run ({type(e).__name__}: {e})"
    if p.returncode != 0:
        msg = p.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap failed (exit {p.returncode}: {msg[-1] if msg else 'no message'})"
    return None


def choose(requested: str, *, network: bool = False, hide: Sequence[str] = (),
           limits: Limits | None = None, keep: Sequence[str] = ()) -> Isolation:
    """The isolation to run with: ``requested`` as asked, except ``sandbox`` where the
    sandbox cannot start (``sandbox_problem``), which becomes ``process`` with the reason.
    Raises AgentError for a mode not in ``ISOLATION_MODES`` (with the closest one)."""
    if requested not in ISOLATION_MODES:
        import difflib

        near = difflib.get_close_matches(str(requested), ISOLATION_MODES, n=1)
        raise AgentError(f"isolation must be 'sandbox', 'process' or 'inline', got {requested!r}"
                         + (f" (did you mean {near[0]!r}?)" if near else ""))
    lim = limits if limits is not None else Limits()
    if requested == "sandbox":
        why = sandbox_problem(network)
        if why is not None:
            return Isolation("process", requested, why, network, tuple(hide), lim, tuple(keep))
    return Isolation(requested, requested, None, network, tuple(hide), lim, tuple(keep))


def pids_cgroup(limit: int | None, name: str) -> str | None:
    """A new cgroup limiting its processes to ``limit`` (``pids.max``), for a worker started as
    root: the kernel does not apply RLIMIT_NPROC to root, in a user namespace or not. Made
    under the cgroup v2 hierarchy (``/sys/fs/cgroup``, when it offers the ``pids``
    controller) or v1's ``/sys/fs/cgroup/pids``; None when not root, no limit, or neither
    can be written (the caller's note then says processes are not limited)."""
    if limit is None or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    for base, ok in (("/sys/fs/cgroup", "/sys/fs/cgroup/cgroup.controllers"), ("/sys/fs/cgroup/pids", None)):
        try:
            if ok is not None:
                with open(ok) as f:
                    if "pids" not in f.read().split():
                        continue
            elif not os.path.isfile(os.path.join(base, "cgroup.procs")):
                continue
            path = os.path.join(base, name)
            os.mkdir(path, 0o755)
            with open(os.path.join(path, "pids.max"), "w") as f:
                f.write(str(int(limit)))
            return path
        except OSError:
            continue
    return None


def remove_cgroup(path: str | None) -> None:
    """Remove a worker's cgroup (``pids_cgroup``) once its processes are gone (tried for up
    to a second; a cgroup still busy is left to the system)."""
    if path is None:
        return
    import time

    for _ in range(50):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)


def worker_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a worker starts with: ``env`` (default ``os.environ``) without
    trajcheck's settings and libpq's password variables (``TRAJCHECK_*``, ``PGPASSWORD``,
    ``PGPASSFILE``, ``PGSERVICE*``, ``DATABASE_URL``)."""
    src = os.environ if env is None else env
    return {k: v for k, v in src.items()
            if k not in _SECRET_ENV_NAMES and not k.startswith(_SECRET_ENV_PREFIXES)}
