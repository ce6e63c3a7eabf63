"""``python -m trajcheck.promptfoo path|init [DIR]``: where promptfoo finds trajcheck.

* ``path`` prints the folder holding ``assertion.py``, ``provider.py``, ``summary.py`` and
  ``scoring.py`` of the installed package (for ``file://<folder>/assertion.py`` in a config).
* ``init [DIR]`` writes four entry files into DIR (default: the current folder) that import
  the installed package, so a config can say ``file://trajcheck_assert.py``; existing files are
  left alone unless ``--force``.
"""

from __future__ import annotations

import argparse
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


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m trajcheck.promptfoo",
                                description="Where promptfoo finds trajcheck's assertion, provider, "
                                            "summary hook and scoring function.")
    sub = p.add_subparsers(dest="command", required=True, metavar="{path,init}")
    sub.add_parser("path", help="print the installed trajcheck.promptfoo folder")
    init_p = sub.add_parser("init", help="write the entry files (trajcheck_assert.py, ...) into DIR")
    init_p.add_argument("dir", nargs="?", type=Path, default=None,
                        help="target folder (default: the current folder)")
    init_p.add_argument("--force", action="store_true", help="overwrite existing entry files")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run ``path`` or ``init``; ``--help`` exits 0, a bad command or option exits 2 (argparse)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    if argv and not argv[0].startswith("-") and argv[0] not in ("path", "init"):
        import difflib

        near = difflib.get_close_matches(argv[0], ["path", "init"], n=1)
        parser.error(f"unknown command {argv[0]!r}" + (f"; did you mean {near[0]!r}?" if near
                                                      else "; the commands are path and init"))
    args = parser.parse_args(argv)
    if args.command == "path":
        print(folder())
        return 0
    for p in init(args.dir if args.dir is not None else Path.cwd(), args.force):
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
