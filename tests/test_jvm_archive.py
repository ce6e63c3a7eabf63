"""engines.jvm_archive: the Spark driver JVM's class-data archive, written once by the first
`trajcheck eval --engine spark` on a machine and mapped by the next ones; a damaged archive
set aside with the eval still running. Each Spark session runs in its own process (a JVM's
options apply when it starts), with the cache directory in tmp_path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
if not shutil.which("java"):
    pytest.skip("Spark needs a Java runtime (.ci/run installs one)", allow_module_level=True)

from trajcheck.engines import jvm_archive  # noqa: E402
from trajcheck.engines.spark import LEAN_JVM  # noqa: E402
from trajcheck.errors import EngineError  # noqa: E402

TAU = Path(__file__).parent / "data" / "tau_bench" / "gpt-4o-airline.json"

#: a lean session in a fresh process, logging where each class came from; prints a count
SESSION = """
import sys
from trajcheck.engines import jvm_archive, spark
jvm_archive.QUIET += " -Xlog:class+load=info:file=" + sys.argv[1]
s = spark.session(1, lean=True)
print(s.sparkContext.parallelize(range(7)).count())
"""


def _env(cache: Path, **extra: str) -> dict[str, str]:
    """The environment of a session using ``cache``, its record key in a folder beside it
    (``extra`` may name another: ``XDG_STATE_HOME``)."""
    env = dict(os.environ, TRAJCHECK_CACHE_DIR=str(cache),
               XDG_STATE_HOME=str(cache.parent / "state"))
    env.update(extra)
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    return env


CLI = str(Path(sys.executable).with_name("trajcheck"))  # the console script, as users run it


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    cmd = [CLI, *args[1:]] if args[0] == "trajcheck" else [sys.executable, *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)


def _source(log: Path, cls: str) -> str:
    """Where the JVM loaded class ``cls`` from (its class+load log line)."""
    line = next(x for x in log.read_text().splitlines() if f" {cls} source: " in x)
    return line.split(" source: ", 1)[1]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The first `trajcheck eval --engine spark` with an empty cache: the eval's scorecard
    as a local eval's, and the archive written when the process ended."""
    from trajcheck.read.traces import load

    d = tmp_path_factory.mktemp("cds")
    tau = load(TAU)
    trajs = list(tau)[:20]
    runs, cases = d / "runs.jsonl", d / "cases.jsonl"
    runs.write_text("".join(json.dumps(t.to_dict()) + "\n" for t in trajs))
    ids = dict.fromkeys(t.metadata["case_id"] for t in trajs)
    cases.write_text("".join(json.dumps(tau.cases[c].to_dict()) + "\n" for c in ids))
    cache = d / "cache"
    out = _run(["trajcheck", "eval", str(runs), "--cases", str(cases), "--engine",
                "spark", "--workers", "1", "-q", "--json", str(d / "sc.json")], _env(cache))
    assert out.returncode == 0, out.stderr[-3000:]
    local = _run(["trajcheck", "eval", str(runs), "--cases", str(cases), "-q",
                  "--json", str(d / "local.json")], _env(cache))
    assert local.returncode == 0, local.stderr[-3000:]
    return d, cache


def test_the_first_spark_eval_writes_the_archive_at_exit(written):
    d, cache = written
    got, want = json.loads((d / "sc.json").read_text()), json.loads((d / "local.json").read_text())
    assert got["suite"] == want["suite"] and got["runs"] == want["runs"]
    final = jvm_archive.archive_path(LEAN_JVM)
    assert final is not None and final.name.startswith("spark-driver-")
    files = sorted(p.name for p in cache.iterdir())
    # moved into place with its record (size, digest, HMAC): no temporary file, no marker
    assert files == [final.name, final.with_suffix(".record").name]
    size = (cache / final.name).stat().st_size
    rec = (cache / final.with_suffix(".record").name).read_text().split()
    assert size > 10 << 20 and rec[0] == str(size) and len(rec[1]) == 64


def test_later_sessions_map_spark_classes_from_the_archive(written, tmp_path):
    _, cache = written
    log = tmp_path / "classes.log"
    out = _run(["-c", SESSION, str(log)], _env(cache))
    assert out.returncode == 0 and out.stdout.split() == ["7"], out.stderr[-3000:]
    assert "trajcheck: warning" not in out.stderr
    assert _source(log, "org.apache.spark.SparkContext") == "shared objects file (top)"


def _damaged(cache: Path, tmp_path: Path, how: str) -> Path:
    """A copy of the cache with its archive cut to half (``cut``) or its second quarter
    zeroed, the size kept (``zeroed``)."""
    bad = tmp_path / f"cache_{how}"
    shutil.copytree(cache, bad)
    arch = next(bad.glob("*.jsa"))
    data = arch.read_bytes()
    arch.chmod(0o644)
    n = len(data)
    arch.write_bytes(data[: n // 2] if how == "cut" else
                     data[: n // 4] + bytes(n // 4) + data[n // 2:])
    return arch


@pytest.mark.parametrize("how", ["cut", "zeroed"])
def test_a_damaged_archive_is_never_given_to_the_jvm(written, tmp_path, monkeypatch, how):
    """Cut, or of its size with a quarter zeroed: its size or digest is not the recorded
    one; set aside, and a new one written instead."""
    arch = _damaged(written[1], tmp_path, how)
    monkeypatch.setenv("TRAJCHECK_CACHE_DIR", str(arch.parent))
    monkeypatch.setenv("XDG_STATE_HOME", str(written[1].parent / "state"))
    p = jvm_archive.plan(LEAN_JVM)
    assert p.maps is None and p.writes is not None and "SharedArchiveFile" not in p.extra
    why = "its size (" if how == "cut" else "its SHA-256 digest is not the recorded one"
    assert p.note.startswith(f"Spark class-data archive {arch} not mapped: {why}")
    stem = arch.name[: -len(".jsa")]
    assert {p.name for p in arch.parent.iterdir()} == {f"{stem}.jsa.bad", f"{stem}.record"}


def test_a_poisoned_archive_is_not_mapped_and_the_session_starts_without_it(written, tmp_path,
                                                                            monkeypatch):
    """A planted copy with one class constant changed, its size and record kept: the JVM
    loads Spark's classes from the jars, one warning line says why, the session runs, and
    a new archive of this user's is written when the process ends."""
    bad = tmp_path / "cache_poisoned"
    shutil.copytree(written[1], bad)
    arch = next(bad.glob("*.jsa"))
    data = arch.read_bytes()
    at = data.find(b"spark.app.name")
    assert at > 0
    arch.write_bytes(data[:at] + b"spark.app.nbme" + data[at + 14:])
    log = tmp_path / "classes.log"
    env = _env(bad, XDG_STATE_HOME=str(written[1].parent / "state"))  # the archive's key
    out = _run(["-c", SESSION, str(log)], env)
    assert out.returncode == 0 and out.stdout.split() == ["7"], out.stderr[-3000:]
    warned = [x for x in out.stderr.splitlines() if x.startswith("trajcheck: warning:")]
    assert warned == [f"trajcheck: warning: Spark class-data archive {arch} not mapped: its "
                      "SHA-256 digest is not the recorded one (changed since written); set "
                      f"aside as {arch.name}.bad; the Spark session starts without it"]
    assert _source(log, "org.apache.spark.SparkContext") != "shared objects file (top)"
    assert "shared objects file (top)" not in log.read_text()  # the JDK's own base archive only
    assert arch.with_suffix(".jsa.bad").read_bytes()[at:at + 14] == b"spark.app.nbme"
    monkeypatch.setenv("XDG_STATE_HOME", env["XDG_STATE_HOME"])
    assert arch.stat().st_size > 10 << 20 and jvm_archive.check(arch) is None  # the new one


def test_an_archive_the_jvm_crashes_on_is_set_aside_and_the_session_still_starts(
        written, tmp_path, monkeypatch):
    """An archive that passes its check (re-signed here with our key) but makes the JVM
    crash: the session starts again without it (its crash report in the cache, not the
    working directory), and later sessions do not try it (nor write a new one) again."""
    arch = _damaged(written[1], tmp_path, "zeroed")
    bad = arch.parent
    monkeypatch.setenv("XDG_STATE_HOME", str(written[1].parent / "state"))
    dump = arch.with_name(arch.name + ".1.resign.tmp")
    os.replace(arch, dump)
    assert jvm_archive.install(dump) and jvm_archive.verified(arch)
    log = tmp_path / "classes.log"
    out = _run(["-c", SESSION, str(log)], _env(bad, XDG_STATE_HOME=str(written[1].parent / "state")))
    assert out.returncode == 0 and out.stdout.split()[-1:] == ["7"], out.stderr[-3000:]
    assert "A fatal error" in out.stdout and list(bad.glob("hs_err_pid*.log"))
    assert not list(Path.cwd().glob("hs_err_pid*.log"))
    stem = arch.name[: -len(".jsa")]
    left = {p.name for p in bad.iterdir()} - {p.name for p in bad.glob("hs_err_pid*.log")}
    assert left == {f"{stem}.failed", f"{stem}.jsa.bad", f"{stem}.record"}
    monkeypatch.setenv("TRAJCHECK_CACHE_DIR", str(bad))
    assert jvm_archive.plan(LEAN_JVM) == jvm_archive.Plan()


def test_plan_and_prepare_without_starting_spark(written, tmp_path, monkeypatch):
    _, cache = written
    monkeypatch.setenv("TRAJCHECK_CACHE_DIR", str(cache))
    monkeypatch.setenv("XDG_STATE_HOME", str(cache.parent / "state"))
    final = jvm_archive.archive_path(LEAN_JVM)
    p = jvm_archive.plan(LEAN_JVM)
    assert p.maps == final and p.writes is None and f"-XX:SharedArchiveFile={final}" in p.extra
    assert jvm_archive.prepare() == final  # there already: no session started
    empty = tmp_path / "empty"
    monkeypatch.setenv("TRAJCHECK_CACHE_DIR", str(empty))
    p = jvm_archive.plan(LEAN_JVM)
    assert p.maps is None and p.writes is not None and p.writes.parent == empty
    assert p.writes.name.startswith(final.name) and "-XX:ArchiveClassesAtExit=" in p.extra
    # another pyspark or java gives another archive; the switch turns it off
    assert jvm_archive.archive_path(LEAN_JVM + " -Xmx1g") != jvm_archive.archive_path(LEAN_JVM)
    monkeypatch.setenv("TRAJCHECK_SPARK_CDS", "off")
    assert jvm_archive.plan(LEAN_JVM) == jvm_archive.Plan() and jvm_archive.prepare() is None
    monkeypatch.setenv("TRAJCHECK_SPARK_CDS", "of")  # misspelt: an error, not a guess
    with pytest.raises(EngineError, match="TRAJCHECK_SPARK_CDS='of'"):
        jvm_archive.plan(LEAN_JVM)
    monkeypatch.delenv("TRAJCHECK_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert jvm_archive.cache_dir() == tmp_path / "xdg" / "trajcheck"
