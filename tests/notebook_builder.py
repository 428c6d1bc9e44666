"""Turning fixture `.py` submissions into notebooks the way students write them: one cell
per top-level block, plus whatever extra cells a test wants (magics, input(), widgets)."""

from __future__ import annotations

from pathlib import Path

import nbformat

from grader.exercises import percent_cells


def blocks(source: str) -> list[str]:
    """Top-level blocks of a module: a new cell starts at each unindented line that
    follows a blank line (so a def and its body stay together)."""
    cells: list[list[str]] = [[]]
    previous_blank = False
    for line in source.splitlines():
        starts_block = line and not line[0].isspace() and previous_blank
        if starts_block and any(x.strip() for x in cells[-1]):
            cells.append([])
        cells[-1].append(line)
        previous_blank = not line.strip()
    return ["\n".join(c).strip("\n") for c in cells if any(x.strip() for x in c)]


def notebook_from_py(
    py: Path, target: Path, before: list[str] = (), after: list[str] = (), kernel: dict | None = None
) -> Path:
    """Write `target`: markdown/code cells from a percent-format file, else one code cell
    per block; `before`/`after` are extra code cells."""
    text = py.read_text()
    if "# %%" in text:
        pairs = percent_cells(text)
    else:
        pairs = [("code", block) for block in blocks(text)]
    cells = [nbformat.v4.new_code_cell(c) for c in before]
    cells += [nbformat.v4.new_markdown_cell(s) if k == "markdown" else nbformat.v4.new_code_cell(s) for k, s in pairs]
    cells += [nbformat.v4.new_code_cell(c) for c in after]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = kernel or {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, target)
    return target
