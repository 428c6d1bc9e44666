"""A notebook's grading ends its ZeroMQ contexts when it closes its kernel: left to the
collector, they lived on in the kernel worker's reference cycles, and one that lasted to
the interpreter's exit could hang the process there (pyzmq leaves its sockets open at
exit; jupyter_client's __del__ then ends the context, which waits for every socket)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent

# graded in a fresh interpreter: the count is of this grading's contexts alone, none of
# another test's; gc.get_objects() sees what still lives, before any collection
SCRIPT = """
import gc, sys
from pathlib import Path
import nbformat
from grader.grading import grade_submission
from grader.labs import get_lab
from grader.spec import load_spec, spec_path
gc.disable()
source = Path(sys.argv[1], "reference", "solutions", "tree.py").read_text()
notebook = Path(sys.argv[2])
nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)]), notebook)
report = grade_submission(notebook, get_lab("tree"), load_spec(spec_path("tree")), seed=1)
import zmq
left = [o for o in gc.get_objects() if isinstance(o, zmq.Context) and not o.closed]
print("graded", report.score == report.max_score > 0, "open contexts", len(left))
"""


@pytest.mark.slow  # a Jupyter kernel
def test_a_graded_notebook_leaves_no_zmq_context_open(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(PROJECT), str(tmp_path / "lab.ipynb")],
        capture_output=True,
        text=True,
        timeout=900,  # a kernel's start and the tree lab's cases, at a load of 10 and more
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "graded True open contexts 0" in done.stdout, done.stdout + done.stderr[-2000:]
