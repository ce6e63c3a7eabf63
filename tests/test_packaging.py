"""The wheel's package list names every package in the source tree.

pyproject.toml lists packages by hand (the three source folders map onto one ``trajcheck``
namespace through ``package-dir``), so a new subpackage that is not added there is left out
of the wheel and every import of it fails once installed, while tests run from the checkout
pass. This happened with ``trajcheck.match.matchers``.
"""
from __future__ import annotations

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_every_source_package_is_in_the_wheel():
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed = set(tool["packages"])
    on_disk = set()
    for pkg, folder in tool["package-dir"].items():
        # every folder holding modules or package data (schemas/ has JSON and no __init__)
        for f in (ROOT / folder).rglob("*"):
            if f.suffix in (".py", ".json") and "__pycache__" not in f.parts:
                on_disk.add(".".join((pkg, *f.parent.relative_to(ROOT / folder).parts)))
    assert {"trajcheck.match.matchers", "trajcheck.read.traces", "trajcheck.schemas",
            "trajcheck.adapters", "trajcheck.promptfoo"} <= on_disk
    assert on_disk - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - on_disk == set(), "packages listed in pyproject.toml with no folder"
