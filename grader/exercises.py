"""Student skeletons, generated from the reference solutions (the single source of truth).

A region between `### BEGIN SOLUTION` and `### END SOLUTION` is the answer: the skeleton
drops it and keeps what follows an optional `### ELSE` (uncommented), or else writes a
TODO and `raise NotImplementedError`. So skeleton and solution can't drift apart.

The student wheel (course/student_wheel.py) carries no solutions: it ships the skeletons
generated at build time in `grader/skeletons/<lab>/`, which are read instead when present.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from .paths import EXERCISES_DIR, PACKAGE_DIR, SOLUTIONS_DIR

SKELETONS_DIR = PACKAGE_DIR / "skeletons"  # only in the student wheel

BEGIN, ELSE, END = "### BEGIN SOLUTION", "### ELSE", "### END SOLUTION"
_COMMENT = re.compile(r"^(\s*)# ?")
_CELL = re.compile(r"^# %%(.*)$")


class MarkerError(ValueError):
    """Unbalanced or misplaced solution markers, reported with file and line."""


def strip_solutions(text: str, source: str = "<solution>") -> str:
    out: list[str] = []
    state, begin_line, indent = "code", 0, ""
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        marker = line.strip()
        if marker == BEGIN:
            if state != "code":
                raise MarkerError(f"{source}:{number}: {BEGIN} inside the solution region opened at line {begin_line}")
            state, begin_line, indent = "solution", number, line[: len(line) - len(line.lstrip())]
            has_else = False
        elif marker == ELSE:
            if state != "solution":
                raise MarkerError(f"{source}:{number}: {ELSE} outside a solution region")
            state, has_else = "else", True
        elif marker == END:
            if state == "code":
                raise MarkerError(f"{source}:{number}: {END} without {BEGIN}")
            if not has_else:
                out.append(f"{indent}# TODO: your code here\n{indent}raise NotImplementedError\n")
            state = "code"
        elif state == "code":
            out.append(line)
        elif state == "else":
            out.append(_COMMENT.sub(r"\1", line, count=1))
    if state != "code":
        raise MarkerError(f"{source}:{begin_line}: {BEGIN} is never closed by {END}")
    return "".join(out)


def solution_path(lab: str) -> Path:
    path = SOLUTIONS_DIR / f"{lab}.py"
    if not path.exists():
        raise KeyError(f"unknown lab {lab!r}; known labs: {', '.join(known_labs())}")
    return path


def known_labs() -> list[str]:
    if SKELETONS_DIR.is_dir():
        return sorted(p.name for p in SKELETONS_DIR.iterdir() if (p / "lab.py").is_file())
    return sorted(p.stem for p in SOLUTIONS_DIR.glob("*.py") if p.stem != "__init__")


def _shipped(lab: str, name: str) -> str | None:
    """A skeleton the student wheel ships, or None (a checkout or the full package)."""
    if not SKELETONS_DIR.is_dir():
        return None
    path = SKELETONS_DIR / lab / name
    if lab not in known_labs() or not path.is_file():
        raise KeyError(f"unknown lab {lab!r}; known labs: {', '.join(known_labs())}")
    return path.read_text(encoding="utf-8")


def exercise_text(lab: str) -> str:
    """The student's `.py` starting file of `lab`."""
    shipped = _shipped(lab, "lab.py")
    if shipped is not None:
        return shipped
    return skeleton_text(solution_path(lab))


def skeleton_text(solution: Path) -> str:
    """The student's `.py` starting file cut from a solution file (a lab folder's reference)."""
    return strip_solutions(solution.read_text(), str(solution))


def exercise_path(lab: str) -> Path:
    """Where the checked-in skeleton of `lab` lives."""
    return EXERCISES_DIR / lab / "lab.py"


def percent_cells(text: str) -> list[tuple[str, str]]:
    """Split a jupytext "percent" file into (cell type, source) pairs."""
    cells: list[tuple[str, list[str]]] = [("code", [])]
    for line in text.splitlines():
        match = _CELL.match(line)
        if match:
            cells.append(("markdown" if "[markdown]" in match.group(1) else "code", []))
        else:
            cells[-1][1].append(line)
    result = []
    for kind, lines in cells:
        if kind == "markdown":
            lines = [re.sub(r"^# ?", "", line) for line in lines]
        source = "\n".join(lines).strip("\n")
        if source.strip():
            result.append((kind, source))
    return result


def exercise_notebook(lab: str, text: str | None = None) -> nbformat.NotebookNode:
    """The student's notebook of `lab`: the same cells as the `.py` skeleton (`text`, when
    given: a lab folder's, cut from its reference)."""
    cells = []
    for number, (kind, source) in enumerate(percent_cells(exercise_text(lab) if text is None else text), start=1):
        cell = nbformat.v4.new_markdown_cell(source) if kind == "markdown" else nbformat.v4.new_code_cell(source)
        cell["id"] = f"{lab}-{number}"  # stable ids: the same source gives the same file
        cells.append(cell)
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    }
    return notebook


def exercise_notebook_text(lab: str, text: str | None = None) -> str:
    shipped = _shipped(lab, "lab.ipynb") if text is None else None
    if shipped is not None:
        return shipped
    return nbformat.writes(exercise_notebook(lab, text)) + "\n"


def exercise_notebook_path(lab: str) -> Path:
    return EXERCISES_DIR / lab / "lab.ipynb"
