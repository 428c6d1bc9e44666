"""How a `.py` worker starts (issue 26, goal 1): its interpreter runs without site (no .pth
files, no editable install's finder) and still imports what site-packages holds, alone or
forked from a batch's worker zygote; the observer's modules arrive compiled by the grader."""

from __future__ import annotations

import json
import marshal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.grading import grade_submission
from grader.labs import get_lab
from grader.results import GradeReport
from grader.sandbox import worker_zygote
from grader.sandbox.identity import grader_is_root
from grader.sandbox.session import ProbeSetup, _compiled_hex
from grader.sandbox.worker import SITE_PATHS
from grader.spec import load_spec

TESTS = Path(__file__).resolve().parent
SPEC = TESTS / "fixtures" / "specs" / "tree_hostile_limits.yaml"
SOLUTION = TESTS.parent / "reference" / "solutions" / "tree.py"
PROBE_INSTALL = TESTS.parent / "grader" / "sandbox" / "probe_install.py"

# what the student's interpreter says of itself, printed while the submission is imported
SEES = """
import json, sys
import numpy, yaml
print("START", json.dumps({
    "no_site": sys.flags.no_site,
    "site": "site" in sys.modules,
    "finders": [type(f).__module__ + "." + type(f).__name__ for f in sys.meta_path],
    "numpy": numpy.__file__,
    "yaml": yaml.__file__,
    "sum": int(numpy.arange(4).sum()),
}))
"""


@pytest.fixture(params=["own interpreter", "zygote fork"])
def started(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A worker started the usual way (`grade`), or forked from the worker zygote (a batch's
    grader process, root only)."""
    if request.param == "zygote fork":
        if not grader_is_root():
            pytest.skip("the zygote serves root graders (a leased uid per worker)")
        monkeypatch.delenv("ABGRADE_WORKER_ZYGOTE", raising=False)
        worker_zygote.use()
    yield request.param
    worker_zygote.use(False)


def seen(report: GradeReport) -> dict:
    lines = [line for line in report.student_output.splitlines() if line.startswith("START ")]
    assert len(lines) == 1, report.student_output
    return json.loads(lines[0][len("START ") :])


def test_the_worker_runs_without_site_and_imports_from_site_packages(tmp_path, started):
    (tmp_path / "sees.py").write_text(SEES + SOLUTION.read_text())
    report = grade_submission(tmp_path / "sees.py", get_lab("tree"), load_spec(SPEC), seed=1)
    assert report.score == report.max_score, report.student_output
    if started == "zygote fork":
        assert worker_zygote._ZYGOTE is not None and worker_zygote._ZYGOTE.alive, worker_zygote.note()
    view = seen(report)
    assert view["no_site"] == 1 and view["site"] is False
    assert not [f for f in view["finders"] if "editable" in f.lower()], view["finders"]
    assert view["sum"] == 6
    for name in ("numpy", "yaml"):  # from the venv's site-packages, as with site
        assert any(view[name].startswith(folder) for folder in SITE_PATHS), view[name]


def installed(modules: list[list[str]]) -> list:
    """What probe_install.py makes of `modules` in a fresh `python -I -S`."""
    program = (
        PROBE_INSTALL.read_text()
        + "\nimport json, sys\n"
        + "runtime, handle = _abgrade_install_probe(json.loads(sys.stdin.read()))\n"
        + "extra = sys.modules['_abgrade_extra']\n"
        + "print(json.dumps([runtime.__file__, extra.__file__, handle.__code__.co_filename, extra.KIND]))\n"
    )
    run = subprocess.run(
        [sys.executable, "-I", "-S", "-c", program],
        input=json.dumps({"modules": modules, "handler": "_abgrade_extra"}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_shipped_modules_arrive_compiled_and_run_as_if_compiled_in_the_student_process():
    """The grader compiles them as the student's interpreter would have: the same file
    name, no __future__ flag of the grader's own module (annotations stay evaluated)."""
    runtime = ProbeSetup("tree", {}, get_lab("tree").probe.observer).modules()[0]
    extra = ("_abgrade_extra", "def handle(x: int) -> None:\n    pass\nKIND = handle.__annotations__['x'].__name__\n")
    compiled = [[name, "", _compiled_hex(name, source)] for name, source in (runtime, extra)]
    assert marshal.loads(bytes.fromhex(compiled[1][2])).co_filename == "<abgrade _abgrade_extra>"
    expected = ["<abgrade _abgrade_runtime>", "<abgrade _abgrade_extra>", "<abgrade _abgrade_extra>", "int"]
    assert installed(compiled) == expected
    assert installed([list(runtime), list(extra)]) == expected  # sources, as a kernel gets them


def test_a_py_session_ships_the_compiled_modules():
    probe = get_lab("tree").probe
    compiled = probe.compiled_modules()
    assert [entry[0] for entry in compiled] == [name for name, _ in probe.modules()]
    assert all(len(entry) == 3 and entry[1] == "" for entry in compiled)
    assert probe.setup_message(load_spec(SPEC).limits, compiled)["modules"] is compiled
    assert probe.compiled_modules()[0][2] is compiled[0][2]  # once per grader process
