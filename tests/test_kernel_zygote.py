"""Kernels forked from the kernel zygote (grader/sandbox/kernel_zygote.py), with real
kernels: a fresh process per submission that sees nothing of the one before (variables,
planted modules, patched IPython and ipykernel attributes), the same confinement as a
kernel started on its own at every isolation level, a zygote that student code can't
reach, and grading that goes on the usual way when the zygote can't start or dies."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import uuid
from pathlib import Path

import nbformat
import pytest

from grader.grading import grade_submission
from grader.labs import get_lab
from grader.sandbox import isolation as isolation_module
from grader.sandbox import kernel_zygote, socket_folder, zygote_process
from grader.sandbox import session as session_module
from grader.sandbox.deadline import Deadline
from grader.sandbox.identity import STUDENT_GID, grader_is_root, lease
from grader.sandbox.notebook import KernelWorker
from grader.spec import load_spec
from grader.spec.model import Limits

from .notebook_builder import notebook_from_py

TESTS = Path(__file__).resolve().parent
HOSTILE = TESTS / "fixtures" / "hostile"
SPEC = TESTS / "fixtures" / "specs" / "tree_hostile_limits.yaml"
SOLUTION = TESTS.parent / "reference" / "solutions" / "tree.py"
LEVELS = ["namespaces", "process"] if isolation_module.detect_isolation().level == "namespaces" else ["process"]
LEVEL_OF = {"namespaces": isolation_module.NAMESPACES, "process": isolation_module.PROCESS}

pytestmark = [
    pytest.mark.skipif(not grader_is_root(), reason="the zygote serves root graders (a leased uid per kernel)"),
    pytest.mark.usefixtures("grader_files_untouched"),
]

FIRST = """
import json, os, random, sys, types
import IPython.core.interactiveshell as shell_module
import ipykernel.kernelbase as kernelbase
LEFT_BEHIND = "first student"
json.PLANTED = True
sys.modules["planted_by_first"] = types.ModuleType("planted_by_first")
kernelbase.Kernel.PATCHED = "first"  # a class of ipykernel, patched
kernelbase.PATCHED = "first"  # and the module itself
shell_module.InteractiveShell.PATCHED = "first"
print("PID", os.getpid(), "RANDOM", random.random())
"""
SECOND = """
import json, os, random, sys
import IPython.core.interactiveshell as shell_module
import ipykernel.kernelbase as kernelbase
print("SEEN", "LEFT_BEHIND" in globals(), hasattr(json, "PLANTED"), "planted_by_first" in sys.modules,
      hasattr(shell_module.InteractiveShell, "PATCHED"), hasattr(kernelbase.Kernel, "PATCHED"),
      hasattr(kernelbase, "PATCHED"))
print("PID", os.getpid(), "RANDOM", random.random())
"""


def _kernel(tmp_path: Path, name: str, cells: list[str], identity, level: str = "namespaces") -> KernelWorker:
    folder = tmp_path / name
    folder.mkdir()
    os.chown(folder, identity.uid, identity.gid)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    worker = KernelWorker(folder, Limits(), notebook, LEVEL_OF[level], [], identity)
    load = Deadline(worker.meter).charged("load", 60, "for loading the notebook")
    worker.run_cells([(i, i + 1) for i in range(len(cells))], load, set())
    return worker


def _printed(worker: KernelWorker) -> str:
    return "".join(o.get("text", "") for cell in worker.client.nb.cells for o in cell.get("outputs", []))


def _forked(worker: KernelWorker) -> bool:
    return isinstance(getattr(worker.km.provisioner, "process", None), kernel_zygote.ZygoteKernel)


@pytest.mark.parametrize("level", LEVELS)
def test_each_submission_gets_a_fresh_kernel_that_sees_nothing_of_the_last(tmp_path, level):
    first_id, second_id = lease(), lease()
    assert first_id is not None and second_id is not None
    first = _kernel(tmp_path, "first", [FIRST], first_id, level)
    try:
        assert _forked(first), kernel_zygote.note()
        assert "PID" in _printed(first), _printed(first)
        second = _kernel(tmp_path, "second", [SECOND], second_id, level)
        try:
            assert _forked(second)
            said = _printed(second)
            # not the first one's variable, module, nor its patches of IPython and ipykernel
            assert "SEEN False False False False False False" in said, said
            assert first.pid != second.pid
            random_of = [text.split("RANDOM")[1].split()[0] for text in (_printed(first), said)]
            assert random_of[0] != random_of[1]  # each fork reseeded, not the zygote's state twice
        finally:
            second.close()
    finally:
        first.close()
        first_id.release()
        second_id.release()


REPORTS_AND_KNOCKS = """
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
def test_a_forked_kernel_is_confined_as_any_kernel_and_cannot_reach_the_zygote(tmp_path, monkeypatch, level):
    """reports_privileges.py (tests/test_security.py's fixture) as a notebook: the leased
    uid, no capabilities in any set, no_new_privs, seccomp, own namespaces at the
    namespaces level; and the zygote can't be signalled, nor its channel found."""
    monkeypatch.setattr(session_module, "detect_isolation", lambda: LEVEL_OF[level])
    zygote = kernel_zygote.zygote_for(LEVEL_OF[level], 61000)
    assert zygote is not None and zygote.alive, kernel_zygote.note()
    channel = {os.readlink(f"/proc/{zygote.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{zygote.pid}/fd")}
    channel = {link for link in channel if link.startswith("socket:")}
    spawned = []
    spawn = kernel_zygote.KernelZygote.spawn

    def counted(self, *args, **kwargs):
        spawned.append(spawn(self, *args, **kwargs))
        return spawned[-1]

    monkeypatch.setattr(kernel_zygote.KernelZygote, "spawn", counted)
    path = notebook_from_py(
        HOSTILE / "reports_privileges.py",
        tmp_path / "privileges.ipynb",
        after=[REPORTS_AND_KNOCKS.replace("@ZYGOTE@", str(zygote.pid))],
    )
    report = grade_submission(path, get_lab("tree"), load_spec(SPEC), seed=1)
    assert spawned, "the kernel was not forked from the zygote"
    assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]
    out = report.student_output
    lines = [line.split() for line in out.splitlines()]
    status = {words[1]: words[2] for words in lines if words[:1] == ["STATUS"]}
    assert {status[k] for k in ("CapInh:", "CapPrm:", "CapEff:", "CapAmb:", "CapBnd:")} == {"0000000000000000"}
    assert status["NoNewPrivs:"] == "1"
    assert status["Uid:"] != "0" and int(status["Uid:"]) in range(61000, 61256) and status["Gid:"] == str(STUDENT_GID)
    if isolation_module.filter_program_available():
        assert status["Seccomp:"] == "2"
    assert not [words for words in lines if words[:1] == ["WROTE"]], out
    namespaces = {words[1]: words[2] for words in lines if words[:1] == ["NAMESPACE"]}
    for kind in ("ipc", "uts", "net", "pid", "mnt"):
        assert (namespaces[kind] != os.readlink(f"/proc/self/ns/{kind}")) == (level == "namespaces"), kind
    if level == "namespaces":
        sizes = {words[1]: int(words[2]) for words in lines if words[:1] == ["SIZE"]}
        assert sizes == {"/tmp": isolation_module.PRIVATE_TMP_MB, "/dev/shm": isolation_module.PRIVATE_TMP_MB}
    assert "BLOCKED kill zygote" in out and "GAINED" not in out, out
    kernel_fds = {words[2] for words in lines if words[:1] == ["FD"] and len(words) > 2}
    assert not kernel_fds & channel, (kernel_fds, channel)
    assert zygote.alive and zygote.process is not None and zygote.process.poll() is None


def _honest_notebook(tmp_path: Path) -> Path:
    return notebook_from_py(SOLUTION, tmp_path / "lab.ipynb")


def test_without_a_zygote_kernels_start_the_usual_way(tmp_path, monkeypatch):
    """A zygote that can't import the kernel: a note, no crash, the same grade."""
    monkeypatch.setattr(kernel_zygote, "_ZYGOTE", None)
    monkeypatch.setattr(kernel_zygote, "_NOTE", None)
    monkeypatch.setattr(kernel_zygote, "_SOURCE", "import abgrade_no_such_module\n" + kernel_zygote._SOURCE)
    report = grade_submission(_honest_notebook(tmp_path), get_lab("tree"), load_spec(SPEC), seed=1)
    assert report.score == report.max_score, report.tests[0].output
    assert "unavailable" in (kernel_zygote.note() or "") and "abgrade_no_such_module" in kernel_zygote.note()
    assert kernel_zygote._ZYGOTE is None


@pytest.mark.timing
def test_a_zygote_that_died_is_replaced_and_turned_off_means_off(tmp_path, monkeypatch):
    lab, spec = get_lab("tree"), load_spec(SPEC)
    zygote = kernel_zygote.zygote_for(isolation_module.detect_isolation(), 61000)
    assert zygote is not None and zygote.process is not None
    zygote.process.send_signal(signal.SIGKILL)
    zygote.process.wait()
    deadline = time.monotonic() + 5
    while zygote.alive and time.monotonic() < deadline:
        time.sleep(0.01)
    report = grade_submission(_honest_notebook(tmp_path), lab, spec, seed=1)
    assert report.score == report.max_score, report.tests[0].output
    assert kernel_zygote._ZYGOTE is not None and kernel_zygote._ZYGOTE is not zygote
    monkeypatch.setenv("ABGRADE_KERNEL_ZYGOTE", "0")
    identity = lease()
    assert identity is not None
    worker = _kernel(tmp_path, "off", ["x = 1"], identity, isolation_module.detect_isolation().level)
    try:
        assert not _forked(worker)
    finally:
        worker.close()
        identity.release()


@pytest.mark.parametrize("level", LEVELS)
def test_a_fork_inherits_nothing_of_the_gradings_before_it(tmp_path, monkeypatch, level):
    """Several notebooks graded in one grader process, all forked from one zygote; each
    scans every readable anonymous mapping of its own process (the heap a fork inherits,
    freed memory included) for abgrade folder names: it finds its own, never one of an
    earlier grading (work folder, kernel folder, cgroup, the submission's folder; the
    environment's HOME and TMPDIR are the work folder)."""
    monkeypatch.setattr(session_module, "detect_isolation", lambda: LEVEL_OF[level])
    spawned = []
    spawn = kernel_zygote.KernelZygote.spawn

    def counted(self, *args, **kwargs):
        spawned.append(spawn(self, *args, **kwargs))
        return spawned[-1]

    monkeypatch.setattr(kernel_zygote.KernelZygote, "spawn", counted)
    scan = (HOSTILE / "scans_own_memory.py").read_text()
    earlier: set[str] = set()
    for _ in range(3):
        folder = tmp_path / f"abgrade-scan-{uuid.uuid4().hex[:12]}"
        folder.mkdir()
        path = notebook_from_py(SOLUTION, folder / "lab.ipynb", after=[scan])
        report = grade_submission(path, get_lab("tree"), load_spec(SPEC), seed=1)
        assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]
        words = [line.split() for line in report.student_output.splitlines()]
        found = {w[1] for w in words if w[:1] == ["FOUND"] and len(w) > 1}
        own = {w[1] for w in words if w[:1] == ["OWN"] and len(w) > 1}
        assert any(w[:1] == ["SCANNED"] for w in words), report.student_output
        assert own & found, (own, found)  # the scan sees the heap: its own folder names are there
        assert not found & earlier, f"an earlier grading's names in a fork: {sorted(found & earlier)}"
        # the grader process's one socket base folder (socket_folder.py) holds every grading's
        # kernel folder, so each fork knows it: it belongs to no earlier grading
        earlier |= (own | {folder.name}) - {socket_folder.base_folder().name}
    assert len(spawned) >= 3, kernel_zygote.note()


def test_a_forked_kernel_starts_with_the_zygotes_imports_frozen_and_collects_its_own_garbage(tmp_path):
    """The zygote froze its imports before forking (zygote_process.py: a fork's collections
    never walk, and copy, the zygote's pages); the student's own objects are still
    collected as in any kernel. The zygote kept debugpy out (its kernels have no
    debugger), and left no trace of that: a cell finds debugpy importable."""
    identity = lease()
    assert identity is not None
    code = (
        "import gc\n"
        "class Cycle:\n"
        "    pass\n"
        "a, b = Cycle(), Cycle()\n"
        "a.other, b.other = b, a\n"
        "del a, b\n"
        "print('FROZEN', gc.get_freeze_count() > 1000, 'COLLECTED', gc.collect() >= 2)\n"
        "import importlib.util, sys\n"
        "print('DEBUGPY', 'debugpy' in sys.modules, importlib.util.find_spec('debugpy') is not None)\n"
    )
    worker = _kernel(tmp_path, "frozen", [code], identity)
    try:
        assert _forked(worker), kernel_zygote.note()
        assert "FROZEN True COLLECTED True" in _printed(worker), _printed(worker)
        assert "DEBUGPY False True" in _printed(worker), _printed(worker)
    finally:
        worker.close()
        identity.release()


def test_a_forked_kernel_imports_nothing_its_zygote_has_not(tmp_path):
    """What a kernel imports itself is loaded from disk in every fork, each notebook again
    (unicodedata, a C extension, was about 3 ms of a kernel's CPU): the zygote imports what
    a kernel's start and its first cells do (zygote_process.PREIMPORT). The zygote's modules
    are found as it finds them, in an interpreter of their own. Held to the costly kind, C
    extensions (a shared object opened and linked per fork), and to the modules PREIMPORT
    names: a pure-Python module a newer ipykernel or IPython imports after the fork costs
    less than a millisecond and must not turn CI red on its release day."""
    import subprocess

    zygote = subprocess.run(
        [sys.executable, "-c", ZYGOTE_MODULES, json.dumps(zygote_process.PREIMPORT)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert zygote.returncode == 0, zygote.stderr
    identity = lease()
    assert identity is not None
    worker = _kernel(
        tmp_path,
        "imports",
        [
            "import json, sys\n"
            "print('MODULES', json.dumps({n: str(getattr(m, '__file__', '') or '') for n, m in sys.modules.items()}))"
        ],
        identity,
    )
    try:
        assert _forked(worker), kernel_zygote.note()
        line = next(t for t in _printed(worker).splitlines() if t.startswith("MODULES "))
    finally:
        worker.close()
        identity.release()
    in_kernel = json.loads(line[len("MODULES ") :])
    in_zygote = set(json.loads(zygote.stdout))
    assert set(zygote_process.PREIMPORT) <= set(in_kernel) & in_zygote
    extensions = {name for name, file in in_kernel.items() if file.endswith((".so", ".pyd"))}
    assert extensions - in_zygote == set(), "C extensions every forked kernel loads itself"


# the kernel zygote's imports, as zygote_process.main makes them (debugpy kept out; nothing
# of the grader imported)
ZYGOTE_MODULES = """
import importlib, importlib.util, json, sys
import ctypes, gc, os, select, signal, socket  # the zygote program's own
if sys.path and sys.path[0] == "":
    del sys.path[0]
sys.modules["debugpy"] = None
for name in json.loads(sys.argv[1]):
    importlib.import_module(name)
del sys.modules["debugpy"]
importlib.util.find_spec("ipykernel_launcher")
print(json.dumps(sorted(sys.modules)))
"""


def _stub_zygote(messages: list[dict]) -> kernel_zygote.KernelZygote:
    """A zygote whose process says it is ready, sends `messages` and ends (a real process on
    the real control socket; no kernel is imported)."""
    lines = [{"ready": 0}, *messages]

    def command(fd: int) -> list[str]:
        send = "".join(f"s.sendall({(json.dumps(m) + chr(10)).encode()!r})\n" for m in lines)
        return [sys.executable, "-c", f"import socket\ns = socket.socket(fileno={fd})\n{send}"]

    return kernel_zygote.KernelZygote(command)


def test_a_kernel_whose_zygote_ended_is_not_alive_and_keeps_the_status_it_was_sent():
    """A zygote that ends sends no more exit statuses, and its forks die with it: a kernel
    it forked must not look alive for ever (a grading then waited on it for good)."""
    zygote = _stub_zygote([{"exit": 4242, "status": 3}])
    try:
        deadline = time.monotonic() + 60  # the stub's end, read by the zygote's thread
        while not zygote.ended() and time.monotonic() < deadline:
            zygote.wait_for_exit(0.1)
        assert zygote.ended() and not zygote.alive
        assert kernel_zygote.ZygoteKernel(zygote, 4242).poll() == 3  # what it was sent stays
        assert kernel_zygote.ZygoteKernel(zygote, 4243).poll() == -signal.SIGKILL
        assert kernel_zygote.ZygoteKernel(zygote, 4243).wait(timeout=1) == -signal.SIGKILL
    finally:
        zygote.close()
