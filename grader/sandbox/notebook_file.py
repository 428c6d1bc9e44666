"""Reading a submitted notebook: every way a file can be unusable (too big, not UTF-8,
not JSON, nested without end, the wrong shape anywhere, an old format, another language)
becomes a one-line reason saying where and what to do (a `load` failure), never an
exception. Saved outputs are dropped before running. The shape is checked here, field
by field, and the notebook built from the checked data, so nbformat never sees a value
of the wrong type; unknown extra fields are tolerated as Jupyter tolerates them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4.nbbase import random_cell_id

from ..source_encoding import SAMPLE_BYTES, wide_encoding
from .channel import json_depth_exceeds

MAX_NOTEBOOK_MB = 50
MAX_NOTEBOOK_DEPTH = 100  # real notebooks nest about 10 levels (widget state a few more)
PYTHON_NAMES = {"python", "python3", "python2", "ipython", "ipython3"}
CELL_TYPES = ("code", "markdown", "raw")
RESAVE = "open it in Jupyter and save it again"


class NotebookProblem(Exception):
    """Why a notebook can't be run, in words a student can act on."""


def read_notebook(path: Path) -> nbformat.NotebookNode:
    """The notebook with outputs stripped; raises NotebookProblem with the reason."""
    raw = _parse(_text(path))
    if not isinstance(raw, dict) or ("cells" not in raw and "worksheets" not in raw):
        raise NotebookProblem("not a Jupyter notebook: the JSON has no 'cells'; was the file saved by Jupyter?")
    version = raw.get("nbformat")
    if version != 4:
        shown = version if isinstance(version, int) and not isinstance(version, bool) else "unknown"
        raise NotebookProblem(
            f"notebook format version {shown} is not supported; {RESAVE} in a current Jupyter "
            "(that converts it to version 4), or run `jupyter nbconvert --to notebook "
            "--nbformat 4 FILE`"
        )
    metadata = _mapping(raw.get("metadata", {}), "the notebook's 'metadata'")
    _check_language(metadata)
    cells = raw.get("cells")
    if not isinstance(cells, list):
        raise NotebookProblem(f"the notebook's 'cells' is a {_kind(cells)}, not a list; {RESAVE}")
    if not cells:
        raise NotebookProblem("the notebook has no cells")
    checked = [_cell(cell, number, len(cells)) for number, cell in enumerate(cells, 1)]
    if not any(cell.cell_type == "code" for cell in checked):
        raise NotebookProblem("the notebook has no code cells; your functions must be in code cells")
    minor = raw.get("nbformat_minor")
    try:  # the one validation of the whole (nbformat's compiled schema): the cells were built without
        notebook = nbformat.v4.new_notebook(cells=checked, metadata=nbformat.from_dict(metadata))
    except nbformat.ValidationError as exc:  # a metadata value of the wrong type, say
        raise NotebookProblem(_invalid(exc)) from None
    notebook.nbformat_minor = minor if isinstance(minor, int) and not isinstance(minor, bool) else 4
    return notebook


def _text(path: Path) -> str:
    """The file as text: size capped before reading, UTF-8 (a BOM is accepted)."""
    try:
        size = path.stat().st_size
        if size > MAX_NOTEBOOK_MB * 1024 * 1024:
            raise NotebookProblem(
                f"the notebook file is {size / 2**20:.0f} MB (limit {MAX_NOTEBOOK_MB} MB); clear "
                "its outputs in Jupyter (Edit > Clear Outputs of All Cells) and save it again"
            )
        data = path.read_bytes()
    except OSError as exc:
        raise NotebookProblem(f"the notebook file cannot be read ({exc.strerror})") from None
    wide = wide_encoding(data[:SAMPLE_BYTES])
    if wide is not None:
        raise NotebookProblem(
            f"the notebook file is saved as {wide}; notebooks are UTF-8: {RESAVE} (or save it as UTF-8 in your editor)"
        )
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise NotebookProblem(
            f"the notebook file is not UTF-8 (byte {data[exc.start]:#04x} at line {line}); "
            f"notebooks are UTF-8: {RESAVE} (or save it as UTF-8 in your editor)"
        ) from None
    if not text.strip():
        raise NotebookProblem("the notebook file is empty")
    return text


def _parse(text: str) -> Any:
    if json_depth_exceeds(text.encode("utf-8", "surrogatepass"), MAX_NOTEBOOK_DEPTH):
        raise NotebookProblem(
            f"not a valid notebook: its JSON nests deeper than {MAX_NOTEBOOK_DEPTH} levels; "
            "was the file saved by Jupyter?"
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookProblem(
            f"not a valid notebook: invalid JSON at line {exc.lineno}, column {exc.colno} "
            f"({exc.msg}); was the file saved by Jupyter?"
        ) from None
    except (RecursionError, ValueError) as exc:
        raise NotebookProblem(
            f"not a valid notebook: its JSON cannot be read ({type(exc).__name__}); was the file saved by Jupyter?"
        ) from None


def _kind(value: Any) -> str:
    names = {
        str: "string",
        dict: "mapping",
        list: "list",
        bool: "true/false",
        type(None): "null",
        int: "number",
        float: "number",
    }
    return names.get(type(value), type(value).__name__)


def _mapping(value: Any, place: str) -> dict:
    if not isinstance(value, dict):
        raise NotebookProblem(f"{place} is a {_kind(value)}, not a mapping; {RESAVE}")
    return value


def _cell(raw: Any, number: int, count: int) -> nbformat.NotebookNode:
    """One cell, checked and rebuilt: outputs dropped, source joined into one string."""
    place = f"cell {number} of {count}"
    cell = _mapping(raw, place)
    kind = cell.get("cell_type")
    if kind not in CELL_TYPES:
        shown = repr(kind)[:40] if isinstance(kind, str) else f"a {_kind(kind)}"
        raise NotebookProblem(f"{place} has cell_type {shown}; expected one of {', '.join(CELL_TYPES)}; {RESAVE}")
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        source = "".join(source)
    if not isinstance(source, str):
        raise NotebookProblem(f"{place} ({kind}): its 'source' is a {_kind(source)}, not text; {RESAVE}")
    metadata = nbformat.from_dict(_mapping(cell.get("metadata", {}), f"{place} ({kind}): its 'metadata'"))
    # the fields nbformat.v4.new_*_cell gives it, without their validation of each cell on
    # its own (about 0.15 ms a cell, most of reading a notebook): read_notebook validates
    # the notebook as a whole, these cells in it
    built = nbformat.NotebookNode(id=random_cell_id(), cell_type=kind, metadata=metadata, source=source)
    if kind == "code":
        built.update(execution_count=None, outputs=[])
    return built


def _invalid(exc: nbformat.ValidationError) -> str:
    """nbformat's complaint about the checked notebook, as a NotebookProblem says it:
    where (the cell, by number from 1, and the field) and what."""
    path = list(getattr(exc, "absolute_path", None) or [])
    where = "the notebook"
    if len(path) >= 2 and path[0] == "cells" and isinstance(path[1], int):
        where, path = f"cell {path[1] + 1}", path[2:]
    field = ".".join(str(part) for part in path)[:80]
    said = " ".join(str(getattr(exc, "message", exc)).split())[:160]
    return f"not a valid notebook: {where}{' ' + repr(field) if field else ''}: {said}; {RESAVE}"


def _check_language(metadata: dict) -> None:
    spec = _mapping(metadata.get("kernelspec") or {}, "the notebook's 'metadata.kernelspec'")
    info = _mapping(metadata.get("language_info") or {}, "the notebook's 'metadata.language_info'")
    language = spec.get("language") or info.get("name") or "python"
    if not isinstance(language, str):
        raise NotebookProblem(
            f"the notebook's kernel language is a {_kind(language)}, not a name; "
            "choose the Python 3 kernel (Kernel > Change kernel) and save"
        )
    if language.lower() not in PYTHON_NAMES:
        name = spec.get("display_name") or spec.get("name") or language
        name = name if isinstance(name, str) else language
        raise NotebookProblem(
            f"the notebook's kernel is {name[:60]!r} ({language[:30]}); the labs are graded in "
            "Python 3: change the kernel to Python 3 (Kernel > Change kernel) and save"
        )


def code_cells(notebook: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """(number as Jupyter shows it after Run All in a fresh kernel, `In [n]`: the
    position among code cells, from 1; source) of every code cell."""
    code = [cell for cell in notebook.cells if cell.get("cell_type") == "code"]
    return [(number, cell.source) for number, cell in enumerate(code, 1)]
