"""Documentation that states numbers or tables must stay true to the code."""

from __future__ import annotations

from pathlib import Path

from trajcheck.metrics.trajectory import MODE_TABLE, normalize_mode

ROOT = Path(__file__).resolve().parents[1]


def _row(r) -> str:
    differs = r.implementation_differs or "—"
    return f"| {r.dialect} | `{r.name}` | `{r.neutral}` | {r.args_mode or 'default'} | {differs} |"


def test_modes_doc_is_the_mode_table() -> None:
    table = (ROOT / "docs" / "modes.md").read_text().split("## The table", 1)[1]
    doc_rows = [ln for ln in table.splitlines()
                if ln.startswith("| ") and not ln.startswith(("| dialect", "| ---"))]
    assert doc_rows == [_row(r) for r in MODE_TABLE]


def test_readme_mode_examples_hold() -> None:
    # The README quotes these mappings; each must be what normalize_mode returns.
    assert normalize_mode("any_order_match", "vertex") == "superset"
    assert normalize_mode("unordered", "agentevals") == "unordered"
    assert normalize_mode("tool-sequence", "promptfoo") == "in_order"


def test_readme_python_tour_prints_what_its_comments_say(capsys) -> None:
    text = (ROOT / "README.md").read_text()
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(block, "README.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("0.5 1.0 0.667 ")
    assert lines[1:] == ["True", "True", "False"]
    # and each comment in the block states the printed value
    comments = [ln.split("#", 1)[1].strip() for ln in block.splitlines() if ln.startswith("print(")]
    assert comments[0].startswith("0.5 1.0 0.667")
    assert [c.split()[0] for c in comments[1:]] == ["True", "True", "False"]


def test_core_docstrings_cite_sources_not_issue_numbers() -> None:
    # a definition's source is the seed section, paper or framework doc; trajcheck's own issue
    # numbers mean nothing to a reader of the installed package
    import ast
    import re

    bad_ref = re.compile(r"\bissues? #?\d{1,2}\b(?!\d)|(?<![\w/])#1\d\b(?!\d)", re.I)
    found = []
    for path in sorted((Path(__file__).resolve().parents[1] / "core").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node) or ""
                found += [f"{path.name}:{getattr(node, 'name', '<module>')}: {m.group(0)}"
                          for m in bad_ref.finditer(doc)]
    assert found == []
