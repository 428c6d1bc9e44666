"""Reading a submitted notebook: every way a file can be unusable becomes a one-line
reason (a `load` failure), never an exception. Saved outputs are dropped before running."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat

MAX_NOTEBOOK_MB = 50
PYTHON_NAMES = {"python", "python3", "python2", "ipython", "ipython3"}


class NotebookProblem(Exception):
    """Why a notebook can't be run, in words a student can act on."""


def read_notebook(path: Path) -> nbformat.NotebookNode:
    """The notebook with outputs stripped; raises NotebookProblem with the reason."""
    size = path.stat().st_size
    if size > MAX_NOTEBOOK_MB * 1024 * 1024:
        raise NotebookProblem(f"the notebook file is {size / 2**20:.0f} MB (limit {MAX_NOTEBOOK_MB} MB); "
                              "clear its outputs in Jupyter (Edit > Clear Outputs of All Cells) and save it again")
    text = path.read_bytes().decode("utf-8", "replace")
    if not text.strip():
        raise NotebookProblem("the notebook file is empty")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookProblem(f"not a valid notebook: invalid JSON at line {exc.lineno}, column {exc.colno} "
                              f"({exc.msg}); was the file saved by Jupyter?") from None
    if not isinstance(raw, dict) or "cells" not in raw and "worksheets" not in raw:
        raise NotebookProblem("not a Jupyter notebook: the JSON has no 'cells'")
    version = raw.get("nbformat")
    if version != 4:
        raise NotebookProblem(f"notebook format version {version} is not supported; open it in a current "
                              "Jupyter and save it again (that converts it to version 4)")
    try:
        notebook = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    except Exception as exc:  # noqa: BLE001 - nbformat raises many kinds for broken files
        raise NotebookProblem(f"not a readable notebook: {str(exc).splitlines()[0][:200]}") from None
    _check_language(notebook)
    if not notebook.cells:
        raise NotebookProblem("the notebook has no cells")
    code = [c for c in notebook.cells if c.get("cell_type") == "code"]
    if not code:
        raise NotebookProblem("the notebook has no code cells; your functions must be in code cells")
    for cell in code:
        cell["outputs"] = []
        cell["execution_count"] = None
    return notebook


def _check_language(notebook: nbformat.NotebookNode) -> None:
    metadata = notebook.get("metadata", {})
    spec = metadata.get("kernelspec", {}) or {}
    info = metadata.get("language_info", {}) or {}
    language = str(spec.get("language") or info.get("name") or "python").lower()
    if language not in PYTHON_NAMES:
        name = spec.get("display_name") or spec.get("name") or language
        raise NotebookProblem(f"the notebook's kernel is {name!r} ({language}); the labs are graded in Python 3: "
                              "change the kernel to Python 3 (Kernel > Change kernel) and save")


def code_cells(notebook: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """(cell number counting from 1 over all cells, source) of every code cell."""
    return [(i + 1, c.source) for i, c in enumerate(notebook.cells) if c.get("cell_type") == "code"]
