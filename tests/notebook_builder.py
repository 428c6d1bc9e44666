"""Turning fixture `.py` submissions into notebooks the way students write them: one cell
per top-level block, plus whatever extra cells a test wants (magics, input(), widgets)."""

from __future__ import annotations

import json
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


# --- notebooks as students leave them ------------------------------------------------------
# Each habit rewrites a notebook built by notebook_from_py in place; a correct solution must
# keep full marks and a buggy one exactly its `.py` marks (tests/test_notebooks.py, PARITY).

MESSY_BEFORE = [
    "%matplotlib inline\n%load_ext autoreload\n%autoreload 2",
    "!pip install numpy\n%pip install tqdm",  # tqdm is not there, and there is no network
    "print(helper_not_defined_yet)",  # NameError: run before the cell that defines it
    "name = input('Your name? ')",
    "!ls\n!echo hello",
]
MESSY_AFTER = [
    "%time x = sum(range(10))",
    "%%time\ny = sum(range(1000))",
    "%timeit -n 2 -r 2 sum(range(100))",
    "%%capture captured\nprint('hidden')",
    "from IPython.display import HTML, Markdown, clear_output, display\n"
    "display(HTML('<b>tried it</b>'), Markdown('*done*'))\nclear_output(wait=True)\n{'rich': [1, 2]}",
    "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()",  # matplotlib may be missing
    "from tqdm.notebook import tqdm\nfor _ in tqdm(range(3)):\n    pass",
    "from ipywidgets import IntSlider, interact\n\n@interact(n=IntSlider(min=0, max=9, value=3))\ndef show(n):\n"
    "    print(n * 2)",
    "%%bash\necho from bash",
    "breakpoint()\nprint('after the breakpoint')",
    "%debug",
    "assert 1 + 1 == 3, 'my own test'",
    "'x' * 2_000_000",  # a huge result, shown as output
    "import sys\nsys.exit('stop here')",
    "print('after sys.exit')",
]


def messy(notebook: nbformat.NotebookNode) -> None:
    """Run out of order (execution counts not increasing, a saved error), the solution's
    cells run twice (a later cell redefines the functions), magics, shell and pip cells,
    input(), widgets, tqdm, a plot, a breakpoint(), %debug, a failing assert, sys.exit()."""
    code = [c for c in notebook.cells if c.cell_type == "code"]
    notebook.cells = (
        [nbformat.v4.new_code_cell(s) for s in MESSY_BEFORE]
        + notebook.cells
        + [nbformat.v4.new_code_cell(c.source) for c in code if "def " in c.source]
        + [nbformat.v4.new_code_cell(s) for s in MESSY_AFTER]
    )
    for number, cell in zip([7, 3, 12, 1, 30, 2, 9, 4, 4], (c for c in notebook.cells if c.cell_type == "code")):
        cell.execution_count = number
    notebook.cells[2].outputs = [
        nbformat.v4.new_output("error", ename="NameError", evalue="name 'helper_not_defined_yet' is not defined")
    ]


TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def colab(notebook: nbformat.NotebookNode) -> None:
    """Saved by Colab: its metadata on the notebook and every cell, a drive.mount cell, a
    markdown image attachment, widget state, `!nvidia-smi`."""
    notebook.metadata = {
        "colab": {"provenance": [], "collapsed_sections": [], "name": "lab.ipynb"},
        "kernelspec": {"name": "python3", "display_name": "Python 3"},
        "language_info": {"name": "python"},
        "accelerator": "GPU",
        "widgets": {
            "application/vnd.jupyter.widget-state+json": {
                "version_major": 2,
                "version_minor": 0,
                "state": {"k1": {"model_name": "IntSliderModel", "state": {"value": 3}}},
            }
        },
    }
    picture = nbformat.v4.new_markdown_cell("![tree](attachment:tree.png)")
    picture["attachments"] = {"tree.png": {"image/png": TINY_PNG}}
    notebook.cells[:0] = [
        picture,
        nbformat.v4.new_code_cell("from google.colab import drive\ndrive.mount('/content/drive')"),
        nbformat.v4.new_code_cell("!nvidia-smi"),
    ]
    for number, cell in enumerate(notebook.cells):
        cell.metadata = {"id": f"c{number:04d}", "colab": {"base_uri": "https://localhost:8080/"}}


def vscode_old(notebook: nbformat.NotebookNode) -> None:
    """Saved by VS Code for a `python3.9` kernel this machine doesn't have."""
    notebook.metadata = {
        "kernelspec": {"name": "python3.9", "display_name": ".venv (Python 3.9.7)", "language": "python"},
        "language_info": {"name": "python", "version": "3.9.7", "pygments_lexer": "ipython3"},
        "vscode": {"interpreter": {"hash": "a" * 64}},
        "orig_nbformat": 4,
    }
    for cell in notebook.cells:
        cell.metadata = {"vscode": {"languageId": "python"}} if cell.cell_type == "code" else {}


def every_habit(notebook: nbformat.NotebookNode) -> None:
    """All of them at once: messy's cells (the widget, tqdm, %%bash, breakpoint() and
    sys.exit() cells among them), Colab's cells and attachment, and both editors' metadata
    (VS Code's kernelspec and language_info win; the cells keep VS Code's metadata)."""
    messy(notebook)
    colab(notebook)
    saved_by_colab = dict(notebook.metadata)
    vscode_old(notebook)
    notebook.metadata.update({key: value for key, value in saved_by_colab.items() if key not in notebook.metadata})


HABITS = {"messy": messy, "colab": colab, "vscode_old": vscode_old, "every": every_habit}


def student_notebook(py: Path, target: Path, habit: str, skeleton: Path | None = None) -> Path:
    """`py` as a notebook with a habit of HABITS, after the cells of the course's `skeleton`
    notebook when one is given (its unfinished functions, redefined by the solution's cells,
    and its try-it cells that raise NotImplementedError). `vscode_old` is written as
    nbformat 4.0 (no cell ids), the others as 4.5."""
    notebook_from_py(py, target)
    notebook = nbformat.read(target, 4)
    if skeleton is not None:
        notebook.cells[:0] = nbformat.read(skeleton, 4).cells
    HABITS[habit](notebook)
    text = json.loads(nbformat.writes(notebook))
    if habit == "vscode_old":
        text["nbformat_minor"] = 0
        for cell in text["cells"]:
            cell.pop("id", None)
    target.write_text(json.dumps(text, indent=1))
    return target
