"""engines.jvm_archive's trust checks, without a JVM (tests/test_jvm_archive.py maps and
refuses real archives): an archive is mapped only when it and its cache directory (and the
directories on the way to it) are this user's and writable by no one else, and its size and
SHA-256 digest are the ones its record holds, the record signed under this user's key. A
poisoned or planted archive is never mapped, is set aside and said in one line; a link
planted at any name trajcheck writes is replaced, never written through."""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path

import pytest

from trajcheck.engines import jvm_archive

OPTS = "-Xtest"
DATA = b"CDS-ARCHIVE" + bytes(range(256)) * 100
ROOT = os.geteuid() == 0


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    """The archive's path in a cache directory of this test's own, with an archive installed
    as a JVM's dump would be (key directory also the test's own)."""
    monkeypatch.setenv("TRAJCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(jvm_archive, "archive_path",
                        lambda opts: jvm_archive.cache_dir() / "spark-driver-test.jsa")
    final = jvm_archive.archive_path(OPTS)
    p = jvm_archive.plan(OPTS)  # empty cache: write one (to a name nobody can guess)
    assert p.writes is not None and p.maps is None and p.note is None
    assert p.writes.name.startswith(final.name + ".") and len(p.writes.name) > len(final.name) + 20
    p.writes.write_bytes(DATA)
    assert jvm_archive.install(p.writes)
    return final


def _mapped(final: Path) -> bool:
    p = jvm_archive.plan(OPTS)
    assert (p.maps is not None) == ("SharedArchiveFile" in p.extra)
    return p.maps == final


def _plant(final: Path, data: bytes, key: bytes) -> None:
    """An archive and a well-formed record signed under ``key`` (not this user's)."""
    final.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    mac = hmac.new(key, f"{final.name}\n{len(data)}\n{digest}".encode(), hashlib.sha256)
    final.with_suffix(".record").write_text(f"{len(data)} {digest} {mac.hexdigest()}\n")


def test_an_installed_archive_is_mapped_and_its_record_holds_its_digest(cache):
    size, digest, mac = cache.with_suffix(".record").read_text().split()
    assert (int(size), digest) == (len(DATA), hashlib.sha256(DATA).hexdigest())
    key = jvm_archive.key_path().read_bytes().strip()
    assert len(key) == 64
    want = hmac.new(key, f"{cache.name}\n{size}\n{digest}".encode(), hashlib.sha256).hexdigest()
    assert mac == want
    assert oct(cache.stat().st_mode & 0o777) == "0o600"
    assert oct(jvm_archive.key_path().stat().st_mode & 0o777) == "0o600"
    assert jvm_archive.check(cache) is None
    p = jvm_archive.plan(OPTS)
    assert p.maps == cache and p.note is None and f"-XX:SharedArchiveFile={cache}" in p.extra
    assert {f.name for f in cache.parent.iterdir()} == {cache.name, cache.name[:-4] + ".record"}


def test_a_poisoned_archive_of_the_right_size_is_set_aside_and_rewritten(cache):
    """One byte changed (a class constant), size kept: the digest differs. Not mapped, set
    aside with its bytes, said why; this session writes a new one."""
    data = bytearray(DATA)
    data[200] ^= 0xFF
    cache.write_bytes(bytes(data))
    assert cache.stat().st_size == len(DATA)
    p = jvm_archive.plan(OPTS)
    assert p.maps is None and "SharedArchiveFile" not in p.extra
    assert p.note == (f"Spark class-data archive {cache} not mapped: its SHA-256 digest is not "
                      "the recorded one (changed since written); set aside as "
                      "spark-driver-test.jsa.bad")
    assert not cache.exists() and cache.with_suffix(".jsa.bad").read_bytes() == bytes(data)
    assert p.writes is not None and "-XX:ArchiveClassesAtExit=" in p.extra
    p.writes.write_bytes(DATA)  # the new dump
    assert jvm_archive.install(p.writes) and _mapped(cache)


def test_a_cut_archive_is_not_mapped(cache):
    cache.write_bytes(DATA[:100])
    p = jvm_archive.plan(OPTS)
    assert p.maps is None and f"its size (100 bytes) is not the recorded {len(DATA)}" in p.note


def test_an_archive_and_record_planted_under_another_key_are_not_mapped(cache):
    """A shared cache directory or a restored CI cache: archive and a well-formed record,
    consistent with each other, but signed under someone else's key."""
    _plant(cache, DATA[::-1], b"k" * 64)
    p = jvm_archive.plan(OPTS)
    assert p.maps is None and "not signed with this user's key" in p.note


def test_a_record_from_another_users_key_is_not_trusted(cache, tmp_path, monkeypatch):
    """The same archive and record, checked under another key (another user or machine)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "other-state"))
    assert "not signed with this user's key" in jvm_archive.check(cache)


def test_an_archive_without_a_record_is_not_mapped(cache, tmp_path):
    """Written by a trajcheck before records (it noted only the size, in `.size`), or
    planted without one."""
    cache.with_suffix(".record").unlink()
    cache.with_suffix(".size").write_text(str(len(DATA)))
    p = jvm_archive.plan(OPTS)
    assert p.maps is None and "it has no record (spark-driver-test.record" in p.note
    assert p.writes is not None  # a new one with its record is written


def test_a_link_in_place_of_the_archive_is_not_followed(cache, tmp_path):
    """A link to a file with the very bytes and digest recorded: still not mapped (the
    link's target could change after the check); the link, not its target, is set aside."""
    elsewhere = tmp_path / "elsewhere.jsa"
    os.replace(cache, elsewhere)
    cache.symlink_to(elsewhere)
    p = jvm_archive.plan(OPTS)
    assert p.maps is None and "it is a symbolic link (not followed)" in p.note
    assert cache.with_suffix(".jsa.bad").is_symlink() and elsewhere.read_bytes() == DATA


def test_a_link_in_place_of_the_record_is_not_followed(cache, tmp_path):
    rec = cache.with_suffix(".record")
    real = tmp_path / "record"
    os.replace(rec, real)
    rec.symlink_to(real)
    assert jvm_archive.check(cache) == "its record spark-driver-test.record is a symbolic link (not followed)"
    assert not _mapped(cache)


@pytest.mark.parametrize("mode", [0o620, 0o602, 0o666])
def test_an_archive_others_can_write_is_not_mapped(cache, mode):
    os.chmod(cache, mode)
    assert jvm_archive.check(cache) == f"it is open to group or others (mode {mode:o})"
    assert not _mapped(cache)


def test_a_record_others_can_write_is_not_trusted(cache):
    os.chmod(cache.with_suffix(".record"), 0o666)
    assert "its record spark-driver-test.record is open to group or others" in jvm_archive.check(cache)


def test_a_fifo_at_the_archive_name_does_not_hang_the_check(cache):
    cache.unlink()
    os.mkfifo(cache)
    assert jvm_archive.check(cache) == "it is not a regular file"


@pytest.mark.skipif(not ROOT, reason="giving a file to another user needs root")
def test_an_archive_or_record_of_another_user_is_not_mapped(cache):
    os.chown(cache, 65534, 65534)
    assert jvm_archive.check(cache) == "it belongs to uid 65534, not to this user (0)"
    os.chown(cache, 0, 0)
    os.chown(cache.with_suffix(".record"), 65534, 65534)
    assert "its record spark-driver-test.record belongs to uid 65534" in jvm_archive.check(cache)


def test_an_unsafe_cache_directory_is_not_used(cache):
    d = cache.parent
    os.chmod(d, 0o777)
    p = jvm_archive.plan(OPTS)
    assert p == jvm_archive.Plan(note=f"Spark class-data archive not used: cache directory {d} "
                                      "is writable by group or others (mode 777)")
    assert cache.exists()  # left where it is: not ours to move
    os.chmod(d, 0o770)
    assert "writable by group or others (mode 770)" in jvm_archive.plan(OPTS).note
    os.chmod(d, 0o755)
    assert _mapped(cache)
    if ROOT:
        os.chown(d, 65534, 65534)
        assert jvm_archive.plan(OPTS).note == (f"Spark class-data archive not used: cache "
                                               f"directory {d} belongs to uid 65534, not to "
                                               "this user (0)")


def test_a_directory_on_the_way_others_can_write_makes_the_cache_unsafe(tmp_path, monkeypatch):
    """Whoever can write a parent can swap the cache directory after the check: refused,
    unless the parent is sticky (as /tmp), where others cannot move our entries."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    opened = tmp_path / "open"
    opened.mkdir()
    os.chmod(opened, 0o777)
    d = opened / "cache"
    assert jvm_archive.safe_dir(d, "cache directory") == (
        f"cache directory {d}: {opened} on its path is writable by group or others "
        "(mode 777, no sticky bit)")
    os.chmod(opened, 0o1777)
    assert jvm_archive.safe_dir(d, "cache directory") is None
    # through a link: the directories the link leads through count too
    os.chmod(opened, 0o777)
    link = tmp_path / "link"
    link.symlink_to(opened)
    assert f"{opened} on its path is writable" in jvm_archive.safe_dir(link / "cache", "cache directory")
    # a link at the cache directory itself to a safe one of ours is fine
    ours = tmp_path / "ours"
    ours.mkdir(mode=0o700)
    (tmp_path / "to-ours").symlink_to(ours)
    assert jvm_archive.safe_dir(tmp_path / "to-ours", "cache directory") is None


def test_an_unsafe_key_file_means_no_archive_is_mapped(cache):
    key = jvm_archive.key_path()
    os.chmod(key, 0o644)  # others could read it and sign a planted archive
    assert jvm_archive.check(cache) == f"key file {key} is open to group or others (mode 644)"
    assert not _mapped(cache)
    os.chmod(key, 0o600)
    real = key.with_name("real.key")
    os.replace(key, real)
    key.symlink_to(real)
    assert jvm_archive.check(cache) == f"key file {key} is a symbolic link (not followed)"


def test_the_key_is_made_once_and_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    key = jvm_archive.key_path()
    assert not key.exists()
    k1 = jvm_archive._key()
    assert key.read_bytes() == k1 and len(k1) == 64 and jvm_archive._key() == k1
    assert [p.name for p in key.parent.iterdir()] == ["cache.key"]  # no temporary left


def test_links_planted_at_the_names_trajcheck_writes_are_not_written_through(cache, tmp_path):
    """The old `.size` attack, at every name: a link at the record's, the failure marker's
    or the old `.size` name pointing at a victim file. Each is written to a fresh file
    renamed over the link (or not written at all): the victims are untouched."""
    victims = {n: tmp_path / f"victim-{n}" for n in ("record", "failed", "size")}
    for n, v in victims.items():
        v.write_text("precious")
        at = cache.with_suffix("." + n)
        at.unlink(missing_ok=True)
        at.symlink_to(v)
    tmp = cache.with_name(cache.name + ".1.abcdef.tmp")
    tmp.write_bytes(b"another dump")
    assert jvm_archive.install(tmp)
    rec = cache.with_suffix(".record")
    assert not rec.is_symlink() and rec.read_text().split()[0] == str(len(b"another dump"))
    assert _mapped(cache)
    jvm_archive.discard(cache)  # the failure marker, likewise
    assert not cache.with_suffix(".failed").is_symlink()
    assert all(v.read_text() == "precious" for v in victims.values())


def test_a_link_planted_at_the_dump_name_is_not_installed(cache, tmp_path):
    target = tmp_path / "target.jsa"
    target.write_bytes(b"x" * 10)
    tmp = cache.with_name(cache.name + ".2.feed.tmp")
    tmp.symlink_to(target)
    assert not jvm_archive.install(tmp)
    assert not os.path.lexists(tmp) and target.read_bytes() == b"x" * 10
    assert jvm_archive.check(cache) is None  # the archive in place untouched
    assert cache.with_suffix(".failed").exists()


def test_the_warning_is_one_line_on_stderr(cache, capsys):
    os.chmod(cache, 0o666)
    jvm_archive.warn(jvm_archive.Plan(note="a\nb\x1b[31m"))
    jvm_archive.warn(jvm_archive.plan(OPTS))
    jvm_archive.warn(jvm_archive.plan(OPTS))  # the new plan writes one: nothing to say
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [
        "trajcheck: warning: a\\nb\\x1b[31m; the Spark session starts without it",
        f"trajcheck: warning: Spark class-data archive {cache} not mapped: it is open to "
        "group or others (mode 666); set aside as spark-driver-test.jsa.bad; the Spark "
        "session starts without it"]
