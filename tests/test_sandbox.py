"""Hostile submissions (issue: untrusted student code). Each is graded within its limits
with a clear `limits` or `load` message, leaves no process behind, and leaves the
grader's files untouched. Attacks on the file system and the network are only stopped
at the `namespaces` isolation level; those tests run only where it is available."""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

import pytest

from grader.grading import grade_submission
from grader.labs import get_lab
from grader.sandbox import isolation as isolation_module
from grader.sandbox import session as session_module
from grader.sandbox.cgroup import StudentCgroups
from grader.spec import load_spec

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
HOSTILE = TESTS / "fixtures" / "hostile"
SPEC = TESTS / "fixtures" / "specs" / "tree_hostile_limits.yaml"
LEVELS = {"namespaces": isolation_module.NAMESPACES, "process": isolation_module.PROCESS}
HAVE_NAMESPACES = isolation_module.detect_isolation().level == "namespaces"
needs_namespaces = pytest.mark.skipif(not HAVE_NAMESPACES, reason="this machine does not allow namespaces (unshare)")


pytestmark = pytest.mark.usefixtures("grader_files_untouched")


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def _left_over(marker: str, wait: float = 30.0) -> list[int]:
    deadline = time.monotonic() + wait
    while (found := _processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def grade(name: str, tmp_path: Path, level: str = "", monkeypatch=None):
    """Grade a hostile fixture copied under a unique name (its processes carry it), at
    `level` (default: what the machine allows). Returns (report, unique name)."""
    unique = f"{Path(name).stem}_{uuid.uuid4().hex[:10]}.py"
    text = (HOSTILE / name).read_text().replace("@PROJECT@", str(PROJECT))
    folder = tmp_path / "submissions"
    folder.mkdir(exist_ok=True)
    (folder / unique).write_text(text)
    if level:
        monkeypatch.setattr(session_module, "detect_isolation", lambda: LEVELS[level])
    report = grade_submission(folder / unique, get_lab("tree"), load_spec(SPEC), seed=1)
    return report, unique


def by_name(report, name):
    return next(t for t in report.tests if t.name == name)


def kinds_failed(report) -> set[str]:
    return {t.kind for t in report.tests if not t.passed}


def test_memory_hog_is_stopped_by_the_memory_limit(tmp_path):
    report, _ = grade("memory_hog.py", tmp_path)
    assert kinds_failed(report) == {"value", "nodes", "pruned", "limits"}
    assert "MemoryError" in by_name(report, "limits").output


@pytest.mark.parametrize("level", ["namespaces", "process"])
@pytest.mark.timing
def test_sleeping_children_are_all_killed(tmp_path, monkeypatch, level):
    if level == "namespaces" and not HAVE_NAMESPACES:
        pytest.skip("no namespaces here")
    report, unique = grade("sleeping_children.py", tmp_path, level, monkeypatch)
    assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]
    assert _left_over(unique) == []


def test_os_exit_at_import_is_a_load_failure(tmp_path):
    report, unique = grade("os_exit_at_import.py", tmp_path)
    load = by_name(report, "load")
    assert not load.passed and report.score == 0
    assert "did not finish loading: the student process exited with code 0" in load.output


def test_sys_exit_inside_a_call_fails_the_cases_and_says_so(tmp_path):
    report, _ = grade("sys_exit_in_call.py", tmp_path)
    assert by_name(report, "load").passed
    value = by_name(report, "seed: value")
    assert not value.passed and "called sys.exit('I am done') instead of returning" in value.output


def test_200_mb_of_output_is_truncated_and_changes_nothing(tmp_path):
    report, _ = grade("output_200mb.py", tmp_path)
    assert report.score == report.max_score
    assert len(report.student_output) < 1_100_000
    assert "[output truncated:" in report.student_output


@pytest.mark.parametrize("level", ["namespaces", "process"])
@pytest.mark.timing
def test_ignored_sigterm_does_not_save_a_loop(tmp_path, monkeypatch, level):
    if level == "namespaces" and not HAVE_NAMESPACES:
        pytest.skip("no namespaces here")
    report, unique = grade("ignores_sigterm.py", tmp_path, level, monkeypatch)
    assert kinds_failed(report) == {"value", "nodes", "pruned", "limits"}  # each case killed with SIGKILL
    assert "the time limit of 2 s of CPU time per case" in by_name(report, "limits").output
    assert _left_over(unique) == []


@pytest.mark.parametrize("level", ["namespaces", "process"])
@pytest.mark.timing
def test_endless_thread_does_not_keep_the_worker_alive(tmp_path, monkeypatch, level):
    if level == "namespaces" and not HAVE_NAMESPACES:
        pytest.skip("no namespaces here")
    report, unique = grade("endless_thread.py", tmp_path, level, monkeypatch)
    assert report.score == report.max_score
    assert _left_over(unique) == []


@pytest.mark.parametrize("level", ["namespaces", "process"])
@pytest.mark.timing
def test_signalling_the_parent_does_not_stop_the_grader(tmp_path, monkeypatch, level):
    if level == "namespaces" and not HAVE_NAMESPACES:
        pytest.skip("no namespaces here")
    report, unique = grade("kills_parent.py", tmp_path, level, monkeypatch)
    # we are still here, and every test has a verdict
    assert {t.name for t in report.tests} >= {"load", "seed: value", "limits"}
    assert _left_over(unique) == []


@needs_namespaces
def test_writes_outside_the_work_folder_are_blocked(tmp_path):
    report, _ = grade("writes_outside.py", tmp_path)
    assert report.score == report.max_score
    # /tmp is the student's private tmpfs: writing there works and reaches nothing outside
    wrote = [line.split(" ", 1)[1] for line in report.student_output.splitlines() if line.startswith("WROTE ")]
    assert len(wrote) == 1 and wrote[0].startswith("/tmp/abgrade-escape-marker-"), wrote
    assert report.student_output.count("BLOCKED") == 4
    assert not Path(wrote[0]).exists()
    assert not Path("/root/abgrade-escape-marker").exists()
    assert "isolation: namespaces" in " ".join(report.notes)


@needs_namespaces
def test_the_project_and_the_submissions_folder_are_hidden(tmp_path):
    report, _ = grade("searches_for_specs.py", tmp_path)
    assert report.score == report.max_score
    assert "FOUND 0 []" in report.student_output, report.student_output


@needs_namespaces
def test_no_network(tmp_path):
    report, _ = grade("network.py", tmp_path)
    assert report.score == report.max_score
    assert "NETWORK reachable" not in report.student_output
    assert "NETWORK OSError" in report.student_output


def test_the_isolation_level_is_stated_in_the_results(tmp_path, monkeypatch):
    report, _ = grade("endless_thread.py", tmp_path, "process", monkeypatch)
    assert any(note.startswith("isolation: process") and "NOT restricted" in note for note in report.notes)


def test_sigterm_to_the_grader_from_a_child_is_survived_at_process_level(tmp_path, monkeypatch):
    """At process level a shell stands between student and grader: the grader's own
    SIGTERM handler is never triggered by a submission."""
    hit = []
    previous = signal.signal(signal.SIGTERM, lambda *_: hit.append(True))
    try:
        grade("kills_parent.py", tmp_path, "process", monkeypatch)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert hit == []


@needs_namespaces
def test_a_batch_hides_the_other_students_and_the_output_folder(tmp_path):
    """Folder per student: alice's code can't read bob's folder or the gradebook folder."""
    classroom, out = tmp_path / "class", tmp_path / "class-abgrade"
    (classroom / "alice").mkdir(parents=True)
    (classroom / "bob").mkdir()
    out.mkdir()
    (classroom / "bob" / "lab.py").write_text("SECRET = 'bob'\n")
    (out / "gradebook.sqlite").write_text("grades")
    alice = classroom / "alice" / "lab.py"
    alice.write_text(
        "import pathlib\nfrom math import inf\n"
        f"for target in ({str(classroom / 'bob' / 'lab.py')!r}, {str(out / 'gradebook.sqlite')!r}):\n"
        "    try:\n        print('READ', pathlib.Path(target).read_text())\n"
        "    except OSError as exc:\n        print('BLOCKED', type(exc).__name__)\n\n"
        + (HOSTILE / "network.py").read_text().split("\n\n\n", 1)[1]
    )  # its correct alphabeta
    report = grade_submission(alice, get_lab("tree"), load_spec(SPEC), seed=1, hidden=(classroom, out))
    assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]
    assert "READ" not in report.student_output and report.student_output.count("BLOCKED") == 2


def _can_make_pids_cgroup() -> bool:
    cgroup = StudentCgroups()
    made = "pids" in cgroup.paths
    cgroup.remove()
    return made


HAVE_PIDS_CGROUP = _can_make_pids_cgroup()


@pytest.mark.skipif(not HAVE_PIDS_CGROUP, reason="no pids cgroup can be made here (RLIMIT_NPROC only)")
@pytest.mark.parametrize("level", ["namespaces", "process"])
@pytest.mark.timing
def test_the_number_of_processes_is_capped_and_all_are_killed(tmp_path, monkeypatch, level):
    if level == "namespaces" and not HAVE_NAMESPACES:
        pytest.skip("no namespaces here")
    report, unique = grade("many_processes.py", tmp_path, level, monkeypatch)
    started = int(report.student_output.split("STARTED")[1].split()[0])
    assert 0 < started < 64  # the spec's default limit: 64 processes and threads
    assert report.score == report.max_score
    assert _left_over(unique) == []


@pytest.mark.parametrize("level", ["namespaces", "process"])
def test_an_honest_submission_can_write_files_with_relative_paths(tmp_path, monkeypatch, level):
    """The work folder is the student's writable current directory (issue: a relative
    path used to hit the read-only file system)."""
    if level == "namespaces" and not HAVE_NAMESPACES:
        pytest.skip("no namespaces here")
    source = (HOSTILE / "network.py").read_text().split("\n\n\n", 1)[1]  # its correct alphabeta
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "writes_notes.py").write_text(
        "import os\nfrom math import inf\ngraph = {}\nterminal_nodes = {}\n"
        "os.makedirs('cache', exist_ok=True)\n"
        "with open('cache/notes.txt', 'w') as handle:\n    handle.write('kept')\n"
        "print('RELATIVE', open('cache/notes.txt').read(), os.getcwd() == os.environ['HOME'])\n\n\n" + source
    )
    monkeypatch.setattr(session_module, "detect_isolation", lambda: LEVELS[level])
    report = grade_submission(folder / "writes_notes.py", get_lab("tree"), load_spec(SPEC), seed=1)
    assert report.score == report.max_score
    assert "RELATIVE kept True" in report.student_output


@pytest.mark.skipif(os.geteuid() != 0, reason="a separate student uid needs a root grader")
@pytest.mark.timing
def test_reaping_a_uid_kills_its_live_processes_and_does_not_wait_for_zombies():
    """A zombie of the uid (an orphaned kernel waiting for the machine's init) can't be
    killed and holds nothing: a lease or release must not spin on it; a live process of
    the uid is still found and killed."""
    from grader.sandbox import identity

    uid = 61992  # outside the pool: no lease is disturbed
    zombie = os.fork()
    if zombie == 0:
        os.setresuid(uid, uid, uid)
        os._exit(0)
    live = os.fork()
    if live == 0:
        os.setresuid(uid, uid, uid)
        time.sleep(30)
        os._exit(0)
    try:
        os.waitid(os.P_PID, zombie, os.WEXITED | os.WNOWAIT)  # it has exited: a zombie until we wait for it
        deadline = time.monotonic() + 60  # setup on a busy machine, not a measurement
        while time.monotonic() < deadline and live not in identity.processes_of(uid):
            time.sleep(0.01)
        assert identity.processes_of(uid) == [live]  # what reap waits to see gone: never the zombie
        identity.reap(uid)
        assert identity.processes_of(uid) == []  # both are zombies now: nothing to spin on
        assert os.waitpid(live, 0)[1] == signal.SIGKILL
    finally:
        for pid in (zombie, live):
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            except OSError:
                pass
