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


# How a notebook brings in code a cell wrote to a file (`%%writefile sol.py`): each runs the
# file's functions with globals other than the user namespace, except `exec` into globals().
FROM_FILE = {
    "run": "%run sol.py",  # a namespace of its own, its names copied to the user's
    "import": "from sol import *",  # the module sol, found in the kernel's working folder
    "exec": 'exec(open("sol.py").read())',  # into the user namespace itself
    "exec_dict": 'found = {}\nexec(open("sol.py").read(), found)\nglobals().update(found)',
}


def notebook_from_file(py: Path, target: Path, style: str) -> Path:
    """Write `target`: a cell that writes `py`'s text to sol.py, then one that brings it in
    the way FROM_FILE[style] says."""
    cells = [
        nbformat.v4.new_code_cell("%%writefile sol.py\n" + py.read_text()),
        nbformat.v4.new_code_cell(FROM_FILE[style]),
    ]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, target)
    return target
