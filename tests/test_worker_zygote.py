"""`.py` workers forked from the worker zygote (grader/sandbox/worker_zygote.py), as a
batch's grader processes fork them: a fresh process per submission that sees nothing of
the one before (variables, planted modules, patched modules, random state: set from its
own grading's seed), the same confinement as a worker started on its own at every
isolation level, the same verdicts on the hostile fixtures, a zygote that student code
can't reach, no earlier grading in a fork's memory, and grading that goes on the usual
way when the zygote can't start or dies. Real zygotes, real student processes."""

from __future__ import annotations

import ast
import os
import random
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from grader.grading import grade_submission
from grader.labs import get_lab
from grader.results import GradeReport
from grader.sandbox import isolation as isolation_module
from grader.sandbox import session as session_module
from grader.sandbox import worker_zygote, zygote_process
from grader.sandbox.identity import STUDENT_GID, grader_is_root
from grader.seeding import Seed, student_seed
from grader.spec import load_spec

TESTS = Path(__file__).resolve().parent
HOSTILE = TESTS / "fixtures" / "hostile"
SPEC = TESTS / "fixtures" / "specs" / "tree_hostile_limits.yaml"
SOLUTION = TESTS.parent / "reference" / "solutions" / "tree.py"
LEVELS = ["namespaces", "process"] if isolation_module.detect_isolation().level == "namespaces" else ["process"]
LEVEL_OF = {"namespaces": isolation_module.NAMESPACES, "process": isolation_module.PROCESS}

pytestmark = [
    pytest.mark.skipif(not grader_is_root(), reason="the zygote serves root graders (a leased uid per worker)"),
    pytest.mark.usefixtures("grader_files_untouched"),
]


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """This test process grades as a batch's grader process does (forks of the zygote);
    the pids of the forks made, in order."""
    monkeypatch.delenv("ABGRADE_WORKER_ZYGOTE", raising=False)
    worker_zygote.use()
    forks: list[int] = []
    fork = worker_zygote.KernelZygote.fork

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        forks.append(fork(self, *args, **kwargs))
        return forks[-1]

    monkeypatch.setattr(worker_zygote.KernelZygote, "fork", counted)
    yield forks
    worker_zygote.use(False)


def at_level(monkeypatch: pytest.MonkeyPatch, level: str) -> None:
    monkeypatch.setattr(session_module, "detect_isolation", lambda: LEVEL_OF[level])


def grade(path: Path) -> GradeReport:
    return grade_submission(path, get_lab("tree"), load_spec(SPEC), seed=1)


def lines(report: GradeReport, word: str) -> list[list[str]]:
    return [line.split() for line in report.student_output.splitlines() if line.split()[:1] == [word]]


FIRST = """
import json, os, random, sys, types
import numpy
LEFT_BEHIND = "first student"
json.PLANTED = True
sys.modules["planted_by_first"] = types.ModuleType("planted_by_first")
numpy.PATCHED = "first"
print("PID", os.getpid(), "RANDOM", random.random(), "NUMPY", numpy.random.random())
"""
SECOND = """
import json, os, random, sys
import numpy
print("SEEN", "planted_by_first" in sys.modules, hasattr(json, "PLANTED"), hasattr(numpy, "PATCHED"))
print("PID", os.getpid(), "RANDOM", random.random(), "NUMPY", numpy.random.random())
"""


def test_each_submission_gets_a_fresh_worker_that_sees_nothing_of_the_last(tmp_path, forking):
    solution = SOLUTION.read_text()
    (tmp_path / "first.py").write_text(FIRST + solution)
    (tmp_path / "second.py").write_text(SECOND + solution)
    first, second = grade(tmp_path / "first.py"), grade(tmp_path / "second.py")
    assert len(forking) >= 2, worker_zygote.note()
    assert first.score == first.max_score and second.score == second.max_score
    assert lines(second, "SEEN") == [["SEEN", "False", "False", "False"]], second.student_output
    (before,), (after,) = lines(first, "PID"), lines(second, "PID")
    assert before[1] != after[1] or forking[0] != forking[-1]
    # random and numpy set in every fork from its grading's seed (seeding.student_seed), never
    # left at the zygote's state: both draw what a fresh interpreter seeded so draws
    value = student_seed(Seed(1, "given with --seed"))
    expected = [repr(random.Random(value).random()), repr(np.random.RandomState(value).random())]
    assert [before[3], before[5]] == [after[3], after[5]] == expected


def test_a_zygote_imports_numpy_only_for_a_lab_whose_own_code_does(tmp_path, monkeypatch, forking):
    """The tree lab's observer imports no numpy: its zygote doesn't either, and a student
    who imports numpy gets it fresh, seeded from its grading's seed as in a zygote that had it
    (the draws of the test above); the tictactoe lab's observer does, and so does its zygote."""
    assert worker_zygote.OPTIONAL == zygote_process.WORKER_OPTIONAL
    assert worker_zygote.preimports_for(get_lab("tree").probe) == ()
    assert worker_zygote.preimports_for(get_lab("tictactoe").probe) == ("numpy",)
    monkeypatch.setattr(worker_zygote, "_ZYGOTE", None)
    worker_zygote.use(preimport=())
    zygote = worker_zygote.zygote_for(isolation_module.detect_isolation(), 61000)
    try:
        assert zygote is not None and zygote.pid is not None, worker_zygote.note()
        assert "numpy" not in Path(f"/proc/{zygote.pid}/maps").read_text()
        (tmp_path / "first.py").write_text(FIRST + SOLUTION.read_text())
        report = grade(tmp_path / "first.py")
        assert forking and report.score == report.max_score, report.student_output
        value = student_seed(Seed(1, "given with --seed"))
        ((_, _, _, drawn, _, numpy_drawn),) = lines(report, "PID")
        assert [drawn, numpy_drawn] == [
            repr(random.Random(value).random()),
            repr(np.random.RandomState(value).random()),
        ]
    finally:
        if zygote is not None:
            zygote.close()


KNOCKS = """
import os, signal
for path in sorted(os.listdir("/proc/self/fd")):
    try:
        print("FD", path, os.readlink("/proc/self/fd/" + path))
    except OSError:
        pass
try:
    os.kill(@ZYGOTE@, signal.SIGKILL)
    print("GAINED kill zygote")
except OSError as exc:
    print("BLOCKED kill zygote", type(exc).__name__)
"""


@pytest.mark.parametrize("level", LEVELS)
def test_a_forked_worker_is_confined_as_any_worker_and_cannot_reach_the_zygote(tmp_path, monkeypatch, forking, level):
    """reports_privileges.py (tests/test_security.py's fixture): the leased uid, no
    capabilities in any set, no_new_privs, seccomp, own namespaces at the namespaces level,
    nothing written where it may not; the zygote can't be signalled, nor its channel found."""
    at_level(monkeypatch, level)
    zygote = worker_zygote.zygote_for(LEVEL_OF[level], 61000)
    assert zygote is not None and zygote.alive, worker_zygote.note()
    channel = {os.readlink(f"/proc/{zygote.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{zygote.pid}/fd")}
    channel = {link for link in channel if link.startswith("socket:")}
    source = (HOSTILE / "reports_privileges.py").read_text() + KNOCKS.replace("@ZYGOTE@", str(zygote.pid))
    (tmp_path / "privileges.py").write_text(source)
    report = grade(tmp_path / "privileges.py")
    assert forking, "the worker was not forked from the zygote"
    assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]
    status = {words[1]: words[2] for words in lines(report, "STATUS")}
    assert {status[k] for k in ("CapInh:", "CapPrm:", "CapEff:", "CapAmb:", "CapBnd:")} == {"0000000000000000"}
    assert status["NoNewPrivs:"] == "1"
    assert int(status["Uid:"]) in range(61000, 61256) and status["Gid:"] == str(STUDENT_GID)
    if isolation_module.filter_program_available():
        assert status["Seccomp:"] == "2"
    assert lines(report, "WROTE") == [], report.student_output
    namespaces = {words[1]: words[2] for words in lines(report, "NAMESPACE")}
    for kind in ("ipc", "uts", "net", "pid", "mnt"):
        assert (namespaces[kind] != os.readlink(f"/proc/self/ns/{kind}")) == (level == "namespaces"), kind
    if level == "namespaces":
        sizes = {words[1]: int(words[2]) for words in lines(report, "SIZE")}
        assert sizes == {"/tmp": isolation_module.PRIVATE_TMP_MB, "/dev/shm": isolation_module.PRIVATE_TMP_MB}
    assert "BLOCKED kill zygote" in report.student_output and "GAINED" not in report.student_output
    worker_fds = {words[2] for words in lines(report, "FD") if len(words) > 2}
    assert not worker_fds & channel, (worker_fds, channel)
    assert zygote.alive and zygote.process is not None and zygote.process.poll() is None


@pytest.mark.parametrize("level", LEVELS)
def test_a_fork_inherits_nothing_of_the_gradings_before_it(tmp_path, monkeypatch, forking, level):
    """Several submissions graded in one grader process, each forked from one zygote; each
    scans every readable anonymous mapping of its own process (the heap a fork inherits,
    freed memory included) for abgrade folder names: it finds none of an earlier grading's
    (work folder, cgroup, the submission's folder)."""
    at_level(monkeypatch, level)
    scan = (HOSTILE / "scans_own_memory.py").read_text()
    earlier: set[str] = set()
    for _ in range(3):
        folder = tmp_path / f"abgrade-scan-{uuid.uuid4().hex[:12]}"
        folder.mkdir()
        (folder / "lab.py").write_text(SOLUTION.read_text() + "\n" + scan)
        report = grade(folder / "lab.py")
        assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]
        found = {w[1] for w in lines(report, "FOUND") if len(w) > 1}
        own = {w[1] for w in lines(report, "OWN") if len(w) > 1}
        assert lines(report, "SCANNED"), report.student_output
        assert not found & earlier, f"an earlier grading's names in a fork: {sorted(found & earlier)}"
        earlier |= own | {folder.name}
    assert len(forking) >= 3, worker_zygote.note()


# hostile fixtures whose verdicts must be the same whether the worker is forked or started
QUICK_HOSTILE = [
    "escapes_cgroup.py",
    "kills_ancestors.py",
    "kills_parent.py",
    "many_processes.py",
    "network.py",
    "os_exit_at_import.py",
    "patches_grader.py",
    "reads_secrets.py",
    "remounts.py",
    "searches_for_specs.py",
    "sys_exit_in_call.py",
    "writes_outside.py",
]


def verdicts(report: GradeReport) -> tuple[float, list[tuple[str, bool]]]:
    return report.score, [(test.name, test.passed) for test in report.tests]


@pytest.mark.parametrize("level", LEVELS)
def test_hostile_submissions_get_the_same_verdicts_from_a_fork(tmp_path, monkeypatch, level):
    at_level(monkeypatch, level)
    started = {name: verdicts(grade(HOSTILE / name)) for name in QUICK_HOSTILE}
    monkeypatch.delenv("ABGRADE_WORKER_ZYGOTE", raising=False)
    worker_zygote.use()
    try:
        forked = {name: verdicts(grade(HOSTILE / name)) for name in QUICK_HOSTILE}
        assert worker_zygote.zygote_for(LEVEL_OF[level], 61000) is not None, worker_zygote.note()
    finally:
        worker_zygote.use(False)
    assert forked == started


def test_a_single_grade_starts_its_worker_the_usual_way(monkeypatch):
    worker_zygote.use(False)
    assert worker_zygote.zygote_for(isolation_module.detect_isolation(), 61000) is None


def test_turned_off_means_off(monkeypatch, forking):
    monkeypatch.setenv("ABGRADE_WORKER_ZYGOTE", "0")
    report = grade(SOLUTION)
    assert report.score == report.max_score and forking == []


def test_without_a_zygote_workers_start_the_usual_way(monkeypatch, forking):
    """A zygote that can't start: a note, no crash, the same grade."""
    monkeypatch.setattr(worker_zygote, "_ZYGOTE", None)
    monkeypatch.setattr(worker_zygote, "_NOTE", None)
    monkeypatch.setattr(worker_zygote, "_SOURCE", "import abgrade_no_such_module\n" + worker_zygote._SOURCE)
    report = grade(SOLUTION)
    assert report.score == report.max_score, report.tests[0].output
    assert "unavailable" in (worker_zygote.note() or "") and "abgrade_no_such_module" in (worker_zygote.note() or "")
    assert forking == []
    monkeypatch.setattr(worker_zygote, "_ZYGOTE", None)


def test_a_zygote_that_died_is_replaced(monkeypatch, forking):
    zygote = worker_zygote.zygote_for(isolation_module.detect_isolation(), 61000)
    assert zygote is not None and zygote.process is not None
    zygote.process.send_signal(signal.SIGKILL)
    zygote.process.wait()
    deadline = time.monotonic() + 5
    while zygote.alive and time.monotonic() < deadline:
        time.sleep(0.01)
    report = grade(SOLUTION)
    assert report.score == report.max_score, report.tests[0].output
    assert worker_zygote._ZYGOTE is not None and worker_zygote._ZYGOTE is not zygote
    assert forking


def _imports(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_a_fork_imports_nothing_its_zygote_did_not(monkeypatch):
    """Everything a `.py` fork imports between the fork and the student's code (its own
    steps, the bootstrap's service, the shipped probe and every lab's observer) is imported
    in the zygote already, and what a kernel's fork imports in its own steps is in the
    kernel zygote's list: an import after the fork costs every submission (tempfile was
    about 5 ms of each `.py` fork's CPU, resource 1.4 ms of each kernel's). Pure: the
    sources' import statements."""
    sandbox = TESTS.parent / "grader" / "sandbox"
    zygote = ast.parse((sandbox / "zygote_process.py").read_text())
    in_the_fork = [f for f in zygote.body if isinstance(f, ast.FunctionDef) and f.name in ("_child", "_read_request")]
    for name in ("bootstrap.py", "probe_install.py", "student_random.py"):
        tree = ast.parse((sandbox / name).read_text())
        in_the_fork += [f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name != "main"]
    in_the_fork += [ast.parse((TESTS.parent / "grader" / "probe" / "runtime.py").read_text())]
    in_the_fork += [ast.parse(path.read_text()) for path in (TESTS.parent / "grader" / "labs").glob("*/observer.py")]
    wanted = set().union(*(_imports(tree) for tree in in_the_fork))
    zygote_has = set(zygote_process.WORKER_PREIMPORT) | set(zygote_process.WORKER_OPTIONAL)
    zygote_has |= {n for n in _imports(ast.Module([s for s in zygote.body if not isinstance(s, ast.FunctionDef)], []))}
    zygote_has |= set(sys.builtin_module_names) | {"sys", "os", "json"}
    kernel_only = {"ipykernel"}  # _child's kernel path: the kernel zygote's PREIMPORT
    missing = {n for n in wanted - zygote_has if not n.startswith("_abgrade") and n not in kernel_only}
    assert not missing, f"imported in every fork, not in the zygote: {sorted(missing)}"
    # a kernel's fork runs _child too (then the kernel app, the kernel zygote's own imports)
    kernel_has = {n.rpartition(".")[0] or n for n in zygote_process.PREIMPORT} | set(zygote_process.PREIMPORT)
    kernel_has |= zygote_has - set(zygote_process.WORKER_PREIMPORT) - set(zygote_process.WORKER_OPTIONAL)
    kernel_wants = set().union(*(_imports(tree) for tree in in_the_fork[:2]))
    assert kernel_wants <= kernel_has, f"imported in every kernel's fork: {sorted(kernel_wants - kernel_has)}"
