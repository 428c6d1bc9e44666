"""Hostile and malformed notebooks (issues 12, 13, 14): a broken file of any shape is a
one-line load failure; a cell that replaces `json` or floods output changes nothing for
the grader (memory stays bounded, the flood is reported as an output limit with
numbers); only the genuine kernel gets onto the observer socket; cells are numbered as
Jupyter shows them and every failing, interrupted, skipped or unrun cell is named."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

from grader.grading import grade_submission
from grader.labs import get_lab
from grader.sandbox.cells import CellIncident, incident_notes
from grader.sandbox.deadline import Deadline
from grader.sandbox.isolation import detect_isolation
from grader.sandbox.notebook import KernelWorker, genuine_peer
from grader.sandbox.notebook_file import MAX_NOTEBOOK_DEPTH, NotebookProblem, read_notebook
from grader.spec import load_spec, spec_path
from grader.spec.model import Limits

from .notebook_builder import notebook_from_py

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
SOLUTION = PROJECT / "reference" / "solutions" / "tree.py"
HOSTILE = TESTS / "fixtures" / "hostile"


def _valid() -> dict:
    return json.loads(
        nbformat.writes(
            nbformat.v4.new_notebook(
                cells=[nbformat.v4.new_markdown_cell("# lab"), nbformat.v4.new_code_cell("x = 1")],
                metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            )
        )
    )


def _with(change) -> bytes:
    notebook = _valid()
    change(notebook)
    return json.dumps(notebook, ensure_ascii=False).encode()


BROKEN = {
    "deep.ipynb": (b"[" * 100_000 + b"]" * 100_000, f"nests deeper than {MAX_NOTEBOOK_DEPTH} levels"),
    "deep_inside.ipynb": (
        _with(lambda nb: nb["metadata"].update(x=json.loads("[" * 500 + "]" * 500))),
        f"nests deeper than {MAX_NOTEBOOK_DEPTH} levels",
    ),
    "kernelspec_string.ipynb": (
        _with(lambda nb: nb["metadata"].update(kernelspec="python3")),
        "'metadata.kernelspec' is a string, not a mapping",
    ),
    "metadata_list.ipynb": (_with(lambda nb: nb.update(metadata=[1])), "'metadata' is a list, not a mapping"),
    "cells_dict.ipynb": (_with(lambda nb: nb.update(cells={"a": 1})), "'cells' is a mapping, not a list"),
    "source_number.ipynb": (
        _with(lambda nb: nb["cells"][1].update(source=42)),
        "cell 2 of 2 (code): its 'source' is a number, not text",
    ),
    "cell_string.ipynb": (_with(lambda nb: nb["cells"].append("print(1)")), "cell 3 of 3 is a string, not a mapping"),
    "cell_type.ipynb": (
        _with(lambda nb: nb["cells"][0].update(cell_type=["code"])),
        "cell 1 of 2 has cell_type a list",
    ),
    "cell_metadata.ipynb": (
        _with(lambda nb: nb["cells"][1].update(metadata="x")),
        "cell 2 of 2 (code): its 'metadata' is a string, not a mapping",
    ),
    "cell_metadata_value.ipynb": (  # nbformat's own check, of the whole notebook: said as one line too
        _with(lambda nb: nb["cells"][1]["metadata"].update(collapsed="yes")),
        "cell 2 'metadata.collapsed': 'yes' is not of type 'boolean'",
    ),
    "language_number.ipynb": (
        _with(lambda nb: nb["metadata"]["kernelspec"].update(language=3)),
        "kernel language is a number",
    ),
    "utf16.ipynb": (json.dumps(_valid()).encode("utf-16"), "saved as UTF-16; notebooks are UTF-8"),
    "latin1.ipynb": (
        _with(lambda nb: nb["cells"][1].update(source="é = 1")).decode().encode("latin-1"),
        "not UTF-8 (byte 0xe9 at line 1)",
    ),
    "not_json.ipynb": (b"def alphabeta(n, a, b, m):\n    return 0\n", "invalid JSON at line 1, column 1"),
    "v3.ipynb": (
        json.dumps({"nbformat": 3, "nbformat_minor": 0, "worksheets": [], "metadata": {}}).encode(),
        "format version 3 is not supported",
    ),
    "version_string.ipynb": (_with(lambda nb: nb.update(nbformat="4")), "format version unknown"),
    "r_kernel.ipynb": (
        _with(lambda nb: nb["metadata"].update(kernelspec={"name": "ir", "display_name": "R", "language": "R"})),
        "the notebook's kernel is 'R' (R)",
    ),
    "array.ipynb": (b"[1, 2]", "the JSON has no 'cells'"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_notebook_is_a_one_line_reason(tmp_path, name):
    content, reason = BROKEN[name]
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(NotebookProblem) as caught:
        read_notebook(path)
    message = str(caught.value)
    assert reason in message
    assert "\n" not in message and len(message) < 300


def test_a_notebook_over_50_mb_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.ipynb"
    with path.open("wb") as file:
        file.truncate(51 * 2**20)  # sparse: nothing is written, nothing is read
    with pytest.raises(NotebookProblem, match=r"51 MB \(limit 50 MB\); clear its outputs"):
        read_notebook(path)


def test_a_bom_and_list_sources_are_read_as_jupyter_does(tmp_path):
    notebook = _valid()
    notebook["cells"][1]["source"] = ["x = 1\n", "y = 2"]
    path = tmp_path / "bom.ipynb"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(notebook).encode())
    assert read_notebook(path).cells[1].source == "x = 1\ny = 2"


def test_broken_notebooks_grade_as_load_failures_naming_the_file(tmp_path):
    lab, spec = get_lab("tree"), load_spec(spec_path("tree"))
    for name in ("kernelspec_string.ipynb", "deep.ipynb", "utf16.ipynb"):
        path = tmp_path / name
        path.write_bytes(BROKEN[name][0])
        report = grade_submission(path, lab, spec, seed=1)
        load = report.tests[0]
        assert report.score == 0 and load.kind == "load" and not load.passed
        assert load.output.startswith(f"{name}: ") and BROKEN[name][1] in load.output


def _grade(notebook: Path, spec=None):
    lab = get_lab("tree")
    return grade_submission(notebook, lab, spec or load_spec(spec_path("tree")), seed=1)


@pytest.mark.slow
def test_a_bom_prefixed_notebook_gets_full_marks(tmp_path):
    path = notebook_from_py(SOLUTION, tmp_path / "bom.ipynb")
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    report = _grade(path)
    assert report.score == report.max_score, report.tests[0].output


REPLACES_JSON = {
    "sys_modules": "import sys, types\nsys.modules['json'] = types.SimpleNamespace(dumps=None, loads=None)",
    "recursive": (
        "import sys, types\nfake = types.ModuleType('json')\n"
        "fake.dumps = lambda *a, **k: fake.dumps(*a, **k)\nfake.loads = lambda *a, **k: fake.loads(*a, **k)\n"
        "sys.modules['json'] = fake\nsys.modules.pop('json.decoder', None)"
    ),
    "breaks_import": "import sys\nsys.modules['json'] = None\nsys.modules['json.decoder'] = None",
}


@pytest.mark.slow
@pytest.mark.parametrize("how", sorted(REPLACES_JSON))
def test_a_cell_that_replaces_json_does_not_stop_the_observer(tmp_path, how):
    path = notebook_from_py(SOLUTION, tmp_path / "json.ipynb", before=[REPLACES_JSON[how]])
    report = _grade(path)
    assert report.score == report.max_score, report.tests[0].output
    assert "RecursionError" not in report.tests[0].output


@pytest.mark.slow
def test_an_observer_that_cannot_start_is_a_clear_load_failure(tmp_path):
    path = notebook_from_py(SOLUTION, tmp_path / "nosocket.ipynb", after=["import socket\nsocket.socket = None"])
    report = _grade(path)
    load = report.tests[0].output  # the kernel's own error, not a wait for a connection that never comes
    assert report.score == 0
    assert "the observer could not start in the kernel: TypeError: 'NoneType' object is not callable" in load
    assert "replace or patch a standard module" in load


@pytest.mark.slow
def test_a_200_mb_flood_keeps_the_grader_small_and_is_reported_with_numbers():
    done = subprocess.run(
        [sys.executable, str(PROJECT / "bench" / "bench_notebook_flood.py"), "--mb", "200"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=PROJECT,
    )
    assert done.returncode == 0, done.stderr
    growth = int(re.search(r"growth (-?\d+) MB", done.stdout).group(1))
    assert growth < 60, done.stdout
    assert "score 75/75" in done.stdout
    assert re.search(r"output limit: 1,000,000 bytes shown, 19\d,\d{3},\d{3} more dropped", done.stdout), done.stdout


@pytest.mark.slow
def test_a_flood_that_undoes_the_kernels_cap_still_cannot_fill_the_grader(tmp_path):
    undo = (
        "from jupyter_client.session import Session\n"
        "Session.send = [c.cell_contents for c in Session.send.__closure__\n"
        "                if getattr(c.cell_contents, '__name__', '') == 'send'][0]"
    )
    flood = (
        "from IPython.display import display\nfor _ in range(20):\n"
        "    display({'text/plain': 'y' * 10_000_000}, raw=True)\n    print('x' * 1_000_000)"
    )
    path = notebook_from_py(SOLUTION, tmp_path / "undo.ipynb", before=[undo, flood])
    code = (
        "import resource, sys\nsys.path.insert(0, sys.argv[1])\n"
        "from grader.grading import grade_submission\nfrom grader.labs import get_lab\n"
        "from grader.spec import load_spec, spec_path\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "r = grade_submission(__import__('pathlib').Path(sys.argv[2]), get_lab('tree'), "
        "load_spec(spec_path('tree')), seed=1)\n"
        "print(r.score, r.max_score, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024)\n"
        "print(r.tests[0].output)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(PROJECT), str(path)], capture_output=True, text=True, timeout=300, cwd=PROJECT
    )
    assert done.returncode == 0, done.stderr
    score, best, growth = done.stdout.split("\n")[0].split()
    assert score == best and int(growth) < 250, done.stdout
    assert "output limit: 1,000,000 bytes shown" in done.stdout


@pytest.mark.slow
@pytest.mark.timing
def test_printing_for_20_seconds_is_an_output_limit_not_a_broken_observer(tmp_path):
    chatty = "import time\nend = time.time() + 20\nwhile time.time() < end:\n    print('still going ' * 50)"
    path = notebook_from_py(SOLUTION, tmp_path / "chatty.ipynb", before=[chatty])
    report = _grade(path)
    assert report.score == report.max_score, report.tests[0].output
    assert re.search(r"output limit: 1,000,000 bytes shown, [\d,]+ more dropped", report.tests[0].output)


@pytest.mark.timing
def test_only_the_right_user_with_the_secret_is_a_genuine_peer():
    secret = "ab" * 16
    for uid, said, expected in [
        (None, secret, True),
        (os.getuid(), secret, True),
        (os.getuid() + 1, secret, False),
        (None, "cd" * 16, False),
        (None, "", False),
    ]:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        if said:
            theirs.sendall(said.encode() + b"\n")
        assert genuine_peer(ours, secret, time.monotonic() + 0.2, uid) is expected, (uid, said)
        ours.close()
        theirs.close()


def _worker(tmp_path: Path, name: str, cells: list[str], limits: Limits | None = None) -> KernelWorker:
    limits = limits or Limits()
    folder = tmp_path / name
    folder.mkdir()
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    worker = KernelWorker(folder, limits, notebook, detect_isolation(), [])
    load = Deadline(worker.meter).charged("load", 30, "for loading the notebook")
    worker.run_cells([(i, i + 1) for i in range(len(cells))], load, set())
    return worker


def _setup(worker: KernelWorker, folder: Path) -> dict:
    probe = get_lab("tree").probe
    return probe.setup_message(worker.limits, student_dir=str(folder), nonce="n0nce", cells=[])


@pytest.mark.slow
@pytest.mark.timing
def test_another_kernel_and_a_stranger_cannot_take_a_graders_observer_socket(tmp_path):
    honest = _worker(tmp_path, "honest", [SOLUTION.read_text()])
    socket_path = honest.private / "probe.sock"
    attacker = _worker(tmp_path, "attacker", [])
    try:
        honest.client.kc.execute("import time; time.sleep(1.5)")  # the honest bootstrap runs after this
        seen: dict[str, bytes] = {}

        def stranger() -> None:
            while True:  # the file is there a moment before the grader listens on it
                peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    peer.connect(str(socket_path))
                    break
                except OSError:  # not there yet, or not listening yet
                    peer.close()
                    time.sleep(0.005)
            peer.sendall(b"0" * 32 + b"\n")
            peer.settimeout(5)
            seen["stranger"] = peer.recv(100)

        thread = threading.Thread(target=stranger)
        thread.start()
        # a cell of another student's kernel that found the socket and knocks with a guess
        knock = (
            f"import socket, time\nwhile True:\n    try:\n        s = socket.socket(socket.AF_UNIX)\n"
            f"        s.connect({str(socket_path)!r})\n        break\n    except OSError:\n        time.sleep(0.005)\n"
            "s.sendall(b'f' * 32 + b'\\n')\ns.settimeout(5)\nprint('got', repr(s.recv(100)))"
        )
        attacker.client.kc.execute(knock)
        reply = honest.start_observer(_setup(honest, tmp_path / "honest"), 20)
        thread.join(10)
        assert isinstance(reply, dict) and reply.get("op") == "loaded" and reply.get("nonce") == "n0nce"
        assert reply["api"]["alphabeta"]["defined"]
        assert seen["stranger"] == b""  # closed at once, told nothing
        case = honest.request({"op": "case", "id": 1, "calls": []}, 10)
        assert isinstance(case, dict) and case.get("nonce") == "n0nce"
    finally:
        honest.close()
        attacker.close()


@pytest.mark.slow
@pytest.mark.timing
def test_cells_are_numbered_as_jupyter_shows_them_and_each_incident_is_named(tmp_path):
    spec = load_spec(TESTS / "fixtures" / "specs" / "tree_notebook_limits.yaml")
    cells = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# My lab"),
            nbformat.v4.new_code_cell("import not_a_module"),  # In [1]
            nbformat.v4.new_markdown_cell("Some text"),
            nbformat.v4.new_code_cell("while True:\n    pass"),  # In [2]: interrupted
            nbformat.v4.new_code_cell("import os\nos._exit(3)"),  # In [3]: kills the kernel
            nbformat.v4.new_code_cell(SOLUTION.read_text()),  # In [4]
        ]
    )
    path = tmp_path / "incidents.ipynb"
    nbformat.write(cells, path)
    report = _grade(path, spec)
    load = report.tests[0].output
    assert report.score == report.max_score, load
    assert "cell In [1] raised ModuleNotFoundError: No module named 'not_a_module'" in load
    assert "cell In [2] ran past the time limit of 2 s of CPU time per notebook cell and was interrupted" in load
    assert ("cell In [3] killed the kernel; it was skipped and the notebook run again without it") in load


def test_a_missing_modules_advice_is_given_once_and_an_empty_message_leaves_no_colon():
    """Pure: a notebook that imports a missing library in several cells gets its advice at
    the first of them; an exception without a message is named alone."""
    missing = "ModuleNotFoundError: No module named 'tqdm'"
    notes = incident_notes(
        [
            CellIncident(1, "raised", missing),
            CellIncident(4, "raised", "NotImplementedError"),
            CellIncident(9, "raised", missing),
        ]
    )
    assert "a `pip install` cell cannot fetch it (no network while grading)" in notes[0]
    assert notes[1] == "cell In [4] raised NotImplementedError"
    assert notes[2] == f"cell In [9] raised {missing} (as above)"
    (typed,) = incident_notes([CellIncident(2, "raised", "StdinNotImplementedError: raw_input was called")])
    assert typed.endswith("nobody types while grading: the cells after it still ran)")
