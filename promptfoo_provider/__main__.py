"""``python -m trajcheck.promptfoo path|init [DIR]``: where promptfoo finds trajcheck.

* ``path`` prints the folder holding ``assertion.py``, ``provider.py``, ``summary.py`` and
  ``scoring.py`` of the installed package (for ``file://<folder>/assertion.py`` in a config).
* ``init [DIR]`` writes four entry files into DIR (default: the current folder) that import
  the installed package, so a config can say ``file://trajcheck_assert.py``; existing files are
  left alone unless ``--force``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ENTRY_FILES = {
    "trajcheck_assert.py": ("trajcheck's promptfoo assertion (type: python / not-python)",
                            "from trajcheck.promptfoo.assertion import get_assert"),
    "trajcheck_provider.py": ("trajcheck's promptfoo provider (runs your agent, returns its run)",
                              "from trajcheck.promptfoo.provider import call_api"),
    "trajcheck_summary.py": ("trajcheck's suite summary hook (extensions: file://trajcheck_summary.py:extension_hook)",
                             "from trajcheck.promptfoo.summary import extension_hook"),
    "trajcheck_scoring.py": ("trajcheck's test scoring function, leaves not-applicable assertions out "
                             "(assertScoringFunction: file://trajcheck_scoring.py:score_test)",
                             "from trajcheck.promptfoo.scoring import score_test"),
}


def folder() -> Path:
    """The installed ``trajcheck.promptfoo`` folder."""
    return Path(__file__).resolve().parent


def init(target: Path, force: bool = False) -> list[Path]:
    """Write the entry files into ``target``; returns the paths written."""
    target.mkdir(parents=True, exist_ok=True)
    out = []
    for name, (what, line) in ENTRY_FILES.items():
        p = target / name
        if p.exists() and not force:
            continue
        p.write_text(f'"""{what}; written by python -m trajcheck.promptfoo init."""\n\n'
                     f"{line}  # noqa: F401\n")
        out.append(p)
    return out


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["path"]:
        print(folder())
        return 0
    if args[:1] == ["init"]:
        force = "--force" in args
        rest = [a for a in args[1:] if a != "--force"]
        written = init(Path(rest[0]) if rest else Path.cwd(), force)
        for p in written:
            print(f"wrote {p}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
