"""`abgrade serve` (grader/serve/, issue 26 goal 1): a grade forked from a running server
is the cold grade, byte for byte; anything that could make it differ (another
environment, changed code, another user) sends the client down the cold path; the
server detaches cleanly, stops, idles out, refuses a folder that is not its own alone;
a client killed or interrupted mid-grade leaves no student behind. Real servers, real
gradings (a few), each server stopped in a `finally`."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from grader.sandbox.first_spawn import FIRST_UID, LEASE_DIR, POOL_SIZE

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HOSTILE = FIXTURES / "hostile"
PROJECT = FIXTURES.parent.parent
WAIT = 120.0  # the grader's own limits with a margin for a loaded machine: never a measured time


def environment(**extra: str) -> dict[str, str]:
    """The environment for the server and its clients alike: the test's without pytest's
    own variables (PYTEST_CURRENT_TEST changes between a fixture and its test)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}
    env.pop("ABGRADE_SERVER", None)
    env.update(extra)
    return env


def as_a_terminal_starts_it() -> None:
    """Ctrl-C must reach the server's grades as it does from a terminal, even when this
    test run was started in the background (`pytest &`, a CI script's `&`): a shell then
    starts it with SIGINT and SIGQUIT ignored, every process inherits that, Python leaves
    an ignored SIGINT alone, and the server's children keep the handlers it started with
    (a served Ctrl-C was ignored, as a cold one would have been; tests/test_batch.py does
    the same)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def abgrade(*words: object, env: dict[str, str], cwd: Path, **options: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, words)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=WAIT,
        preexec_fn=as_a_terminal_starts_it,
        **options,  # type: ignore[arg-type]
    )


class Served:
    """A detached server for the test's folder, and how to ask it."""

    def __init__(self, folder: Path, idle: float = 600, **extra: str) -> None:
        self.folder = folder
        self.cwd = folder / "run"  # on sys.path (`python -m`): a file written there makes the server stale
        self.cwd.mkdir(exist_ok=True)
        self.env = environment(ABGRADE_SERVE_DIR=str(folder / "s"), **extra)
        started = abgrade("serve", "--detach", "--idle", idle, env=self.env, cwd=self.cwd)
        assert started.returncode == 0, started.stderr
        found = re.search(r"serving at (\S+) \(pid (\d+)", started.stdout)
        assert found, started.stdout
        self.socket, self.pid = found[1], int(found[2])

    def counts(self) -> tuple[int, int]:
        """(grades served, grades sent cold) so far."""
        said = abgrade("serve", "--status", env=self.env, cwd=self.cwd).stdout
        found = re.search(r"(\d+) served, (\d+) sent cold", said)
        assert found, said
        return int(found[1]), int(found[2])

    def zygotes(self) -> list[int]:
        """The pids of the worker zygotes the server holds (a root server's)."""
        said = abgrade("serve", "--status", env=self.env, cwd=self.cwd).stdout
        found = re.search(r"worker zygotes: pid ([\d, ]+)", said)
        return [int(pid) for pid in found[1].split(", ")] if found else []

    def stop(self) -> None:
        abgrade("serve", "--stop", env=self.env, cwd=self.cwd)
        wait_gone(self.pid)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(pid: int) -> None:
    end = time.monotonic() + WAIT
    while alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    assert not alive(pid), f"process {pid} is still running"


def descendants(pid: int) -> list[int]:
    """Every live process under `pid`, found through /proc's parent links."""
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as handle:
                    fields = handle.read().rpartition(")")[2].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, of in parents.items() if of == parent]
        found += children
        frontier += children
    return found


def left_under(server: Served) -> list[int]:
    """The server's live descendants but its worker zygotes (idle between grades): a
    grade's child, its students, forks of a zygote."""
    zygotes = set(server.zygotes())
    return [pid for pid in descendants(server.pid) if pid not in zygotes]


def student_uid_under(pid: int) -> int | None:
    for child in descendants(pid):
        try:
            uid = os.stat(f"/proc/{child}").st_uid
        except OSError:
            continue
        if FIRST_UID <= uid < FIRST_UID + POOL_SIZE:
            return uid
    return None


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    """A short folder (a socket's path holds 107 bytes) with the submissions to grade."""
    made = Path(tempfile.mkdtemp(prefix="abs-", dir="/tmp"))
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


@pytest.fixture(scope="module")
def server(folder: Path) -> Iterator[Served]:
    running = Served(folder)
    try:
        yield running
    finally:
        running.stop()


def notebook(folder: Path) -> Path:
    from tests.notebook_builder import notebook_from_py

    return notebook_from_py(FIXTURES / "tree" / "bug_strict_cutoff.py", folder / "tree_bug.ipynb")


CASES = [
    ("tree", "tree/correct_fail_hard.py"),
    ("tree", "tree/bug_strict_cutoff.py"),
    ("negamax", "negamax/fail_hard.py"),
    ("negamax", "negamax/first_successor.py"),
    ("tree", "notebook"),
    ("tictactoe", "tictactoe/bug_tie_last.py"),  # a root server's worker zygote that imported numpy
    ("examples/labs/nim", "examples/labs/nim/variants/fail_hard.py"),  # a lab folder: its modules load in the child
]


@pytest.mark.slow
@pytest.mark.parametrize(("lab", "name"), CASES)
def test_a_served_grade_is_the_cold_grade_byte_for_byte(server: Served, lab: str, name: str) -> None:
    submission = notebook(server.folder) if name == "notebook" else FIXTURES / name
    if lab.startswith("examples/"):
        submission, lab = PROJECT / name, str(PROJECT / lab)
    before = server.counts()
    runs = {}
    for way, env in (("served", server.env), ("cold", {**server.env, "ABGRADE_SERVER": "0"})):
        out = server.folder / f"{way}.json"
        runs[way] = abgrade("grade", submission, "--lab", lab, "--json", out, env=env, cwd=server.cwd)
        runs[way].results = json.loads(out.read_text())  # type: ignore[attr-defined]
        runs[way].results.pop("execution_time", None)  # type: ignore[attr-defined]
    served, cold = runs["served"], runs["cold"]
    assert served.stdout == cold.stdout and served.stderr == cold.stderr
    assert served.returncode == cold.returncode == (0 if "correct" in name or name.endswith("fail_hard.py") else 1)
    assert served.results == cold.results  # type: ignore[attr-defined]
    assert server.counts() == (before[0] + 1, before[1])  # the server took the first, not the second


def test_another_environment_or_folder_on_the_path_grades_cold_with_the_same_result(server: Served) -> None:
    submission = FIXTURES / "tree" / "bug_strict_cutoff.py"
    other_tmp = server.folder / "tmp"
    other_tmp.mkdir(exist_ok=True)
    served_count, cold_count = server.counts()
    elsewhere = abgrade(
        "grade", submission, "--lab", "tree", env={**server.env, "TMPDIR": str(other_tmp)}, cwd=server.cwd
    )
    usual = abgrade("grade", submission, "--lab", "tree", env={**server.env, "ABGRADE_SERVER": "0"}, cwd=server.cwd)
    assert (elsewhere.stdout, elsewhere.returncode) == (usual.stdout, usual.returncode) and usual.returncode == 1
    assert server.counts() == (served_count, cold_count + 1)
    # `python -m` puts the current folder first on sys.path: another folder is another path
    moved = abgrade("grade", submission, "--lab", "tree", env=server.env, cwd=other_tmp)
    assert (moved.stdout, moved.returncode) == (usual.stdout, usual.returncode)
    assert server.counts() == (served_count, cold_count + 2)


def test_a_stale_server_is_not_used_and_exits(tmp_path: Path) -> None:
    folder = Path(tempfile.mkdtemp(prefix="abs-", dir="/tmp"))
    watched = folder / "watched.py"
    watched.write_text("# one\n")
    server = Served(folder, ABGRADE_SERVE_WATCH=str(watched))
    try:
        zygotes = server.zygotes()
        watched.write_text("# changed\n")
        submission = FIXTURES / "tree" / "correct_fail_hard.py"
        graded = abgrade("grade", submission, "--lab", "tree", env=server.env, cwd=server.cwd)
        assert graded.returncode == 0 and "Score:" in graded.stdout and not graded.stderr
        wait_gone(server.pid)
        assert not os.path.exists(server.socket)
        for pid in zygotes:  # its worker zygotes go with it (they had no grade in flight)
            wait_gone(pid)
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def test_a_socket_folder_open_to_others_or_owned_by_another_user_is_refused(folder: Path) -> None:
    # in the module's short folder: under a long TMPDIR, tmp_path's socket path was refused
    # as too long before the folder was looked at
    tmp_path = folder / "refusals"
    tmp_path.mkdir()
    open_folder = tmp_path / "open"
    open_folder.mkdir(mode=0o755)
    os.chmod(open_folder, 0o755)
    env = environment(ABGRADE_SERVE_DIR=str(open_folder))
    refused = abgrade("serve", "--idle", "5", env=env, cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and str(open_folder) in refused.stderr and "chmod 700" in refused.stderr
    os.chmod(open_folder, 0o700)
    os.chown(open_folder, 65534, 65534)
    refused = abgrade("serve", "--idle", "5", env=env, cwd=tmp_path)
    assert refused.returncode == 2 and "belongs to uid 65534" in refused.stderr
    # a client with such a folder grades cold, without a word
    graded = abgrade("grade", FIXTURES / "tree" / "correct_fail_hard.py", "--lab", "tree", "-q", env=env, cwd=tmp_path)
    assert graded.returncode == 0 and not graded.stderr


@pytest.mark.skipif(not shutil.which("setpriv") or not os.path.exists("/usr/bin/python3"), reason="needs setpriv")
def test_a_client_of_another_uid_is_refused(server: Served) -> None:
    # open the way to the socket (the folder is 0700: no other uid even reaches it)
    os.chmod(server.folder, 0o711)
    os.chmod(os.path.dirname(server.socket), 0o711)
    os.chmod(server.socket, 0o777)
    probe = (
        "import socket, struct, marshal, sys\n"
        "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
        "head = s.recv(4); (n,) = struct.unpack('!I', head); data = b''\n"
        "while len(data) < n: data += s.recv(n - len(data))\n"
        "print(marshal.loads(data))\n"
    )
    try:
        asked = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-I", "-c", probe]
            + [server.socket],
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
    finally:
        os.chmod(server.socket, 0o600)
        os.chmod(os.path.dirname(server.socket), 0o700)
        os.chmod(server.folder, 0o700)
    assert asked.stdout.strip() == "('cold', 'another user')", asked.stderr


@pytest.mark.timing
def test_detach_returns_under_captured_output_stop_stops_it_and_a_server_idles_out() -> None:
    folder = Path(tempfile.mkdtemp(prefix="abs-", dir="/tmp"))
    servers: list[Served] = []
    try:
        servers.append(Served(folder))  # `serve --detach` with capture_output, under a timeout: it returned
        zygotes = servers[0].zygotes()
        second = abgrade("serve", "--detach", env=servers[0].env, cwd=servers[0].cwd)
        assert second.returncode == 2 and "already running" in second.stderr and second.stderr.count("\n") == 1
        stopped = abgrade("serve", "--stop", env=servers[0].env, cwd=servers[0].cwd)
        assert stopped.returncode == 0 and f"pid {servers[0].pid}" in stopped.stdout
        assert not alive(servers[0].pid) and not os.path.exists(servers[0].socket)
        for pid in zygotes:
            wait_gone(pid)

        servers.append(Served(folder, idle=1))
        zygotes = servers[1].zygotes()
        wait_gone(servers[1].pid)
        for pid in zygotes:
            wait_gone(pid)
        assert not os.path.exists(servers[1].socket)
        said = abgrade("serve", "--status", env=servers[1].env, cwd=servers[1].cwd)
        assert said.returncode == 1 and "no server" in said.stdout
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def grade_client(server: Served, submission: Path, lab: str = "tree", **streams: Any) -> subprocess.Popen:
    """`abgrade grade` of `submission` as a client of `server`, started as a terminal starts a
    command (text pipes for its output unless `streams` says otherwise)."""
    return subprocess.Popen(
        [sys.executable, "-m", "grader", "grade", str(submission), "--lab", lab],
        env=server.env,
        cwd=server.cwd,
        preexec_fn=as_a_terminal_starts_it,
        **{"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, **streams},
    )


LOOPING = "def alphabeta(node, alpha, beta, max_player):\n    while True:\n        pass\n"


@pytest.mark.timing
def test_a_client_killed_mid_grade_leaves_no_student_and_its_uid_released(server: Served) -> None:
    submission = server.folder / "loops.py"
    submission.write_text(LOOPING)
    client = grade_client(server, submission, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        uid = None
        end = time.monotonic() + WAIT
        while uid is None and time.monotonic() < end and client.poll() is None:
            uid = student_uid_under(server.pid)
            time.sleep(0.02)
        assert uid is not None, "no student process under the server"
    finally:
        client.kill()
        client.wait()
    end = time.monotonic() + WAIT
    while left_under(server) and time.monotonic() < end:
        time.sleep(0.05)
    assert left_under(server) == []
    fd = os.open(os.path.join(LEASE_DIR, str(uid)), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # no grader holds it (another may lease it since: retried)
        fcntl.flock(fd, fcntl.LOCK_UN)
    except BlockingIOError:
        pytest.skip("the uid was leased again by another grading meanwhile")
    finally:
        os.close(fd)


def finished(client: subprocess.Popen, server: Served) -> tuple[str, str]:
    """The client's output once it ended; one that doesn't end within WAIT is killed (never
    left to run into the next test) and the failure says what it printed and whether the
    server took its grade."""
    try:
        return client.communicate(timeout=WAIT)
    except subprocess.TimeoutExpired:
        client.kill()
        stdout, stderr = client.communicate()
        pytest.fail(
            f"the client did not end: served/cold {server.counts()}; stdout {stdout[-2000:]!r}; stderr {stderr[-2000:]!r}"
        )


def looping_client(server: Served) -> subprocess.Popen:
    """A served grade of a search that loops, once its student process runs (or WAIT passed)."""
    submission = server.folder / "loops.py"
    submission.write_text(LOOPING)
    client = grade_client(server, submission)
    end = time.monotonic() + WAIT
    while student_uid_under(server.pid) is None and time.monotonic() < end and client.poll() is None:
        time.sleep(0.02)
    return client


@pytest.mark.timing
def test_ctrl_c_on_the_client_ends_the_grade_as_a_cold_ctrl_c_does(server: Served) -> None:
    client = looping_client(server)
    client.send_signal(signal.SIGINT)
    _, stderr = finished(client, server)
    # the grade's Ctrl-C (130, "interrupted"); or, when the signal came before the client
    # had read the child's "taken" (a loaded machine), the client's own, as a cold grade
    # interrupted at its start ends: by SIGINT (the child, left alone, kills itself)
    assert (client.returncode == 130 and stderr.strip().endswith("abgrade: interrupted")) or (
        client.returncode == -signal.SIGINT
    ), (client.returncode, stderr)
    end = time.monotonic() + WAIT
    while left_under(server) and time.monotonic() < end:
        time.sleep(0.05)
    assert left_under(server) == []


@pytest.mark.timing
def test_a_child_that_dies_before_it_answers_is_one_line_and_exit_code_3(server: Served) -> None:
    client = looping_client(server)
    with open(f"/proc/{server.pid}/task/{server.pid}/children") as handle:
        (child,) = set(map(int, handle.read().split())) - set(server.zygotes())
    os.kill(child, signal.SIGKILL)
    stdout, stderr = finished(client, server)
    assert client.returncode == 3 and stderr.count("\n") == 1 and "ended without finishing" in stderr
    assert "Traceback" not in stdout + stderr
    end = time.monotonic() + WAIT
    while left_under(server) and time.monotonic() < end:
        time.sleep(0.05)
    assert left_under(server) == []


def test_two_grades_served_at_once_each_get_the_cold_result(server: Served) -> None:
    submission = FIXTURES / "tree" / "bug_strict_cutoff.py"
    before = server.counts()
    clients = [grade_client(server, submission, text=False) for _ in range(2)]
    served = [(*client.communicate(timeout=WAIT), client.returncode) for client in clients]
    cold = abgrade("grade", submission, "--lab", "tree", env={**server.env, "ABGRADE_SERVER": "0"}, cwd=server.cwd)
    assert served[0] == served[1] == (cold.stdout.encode(), cold.stderr.encode(), cold.returncode)
    assert server.counts() == (before[0] + 2, before[1])


@pytest.mark.timing
def test_sigterm_on_the_client_ends_the_grade_and_the_client_by_sigterm_as_cold(server: Served) -> None:
    submission = server.folder / "loops.py"
    submission.write_text(LOOPING)
    client = grade_client(server, submission, stdout=subprocess.DEVNULL)
    end = time.monotonic() + WAIT
    while student_uid_under(server.pid) is None and time.monotonic() < end and client.poll() is None:
        time.sleep(0.02)
    client.terminate()
    _, stderr = client.communicate(timeout=WAIT)
    assert client.returncode == -signal.SIGTERM and not stderr  # a cold grader has no SIGTERM handler either
    end = time.monotonic() + WAIT
    while left_under(server) and time.monotonic() < end:
        time.sleep(0.05)
    assert left_under(server) == []


def ancestors(pid: int) -> list[int]:
    found = []
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                pid = int(handle.read().rpartition(")")[2].split()[1])
        except OSError:
            break
        found.append(pid)
    return found


def student_under(server: Served) -> int | None:
    for child in descendants(server.pid):
        try:
            uid = os.stat(f"/proc/{child}").st_uid
        except OSError:
            continue
        if FIRST_UID <= uid < FIRST_UID + POOL_SIZE:
            return child
    return None


@pytest.mark.skipif(os.geteuid() != 0, reason="a root server forks its grades' workers from its zygotes")
def test_a_served_grade_forks_its_worker_from_the_servers_zygote_which_outlives_the_grade(server: Served) -> None:
    zygotes = server.zygotes()
    assert zygotes  # without numpy (and numpy's once a grade of a numpy lab asked for it)
    client = looping_client(server)
    try:
        student = student_under(server)
        assert student is not None, "no student process under the server"
        assert set(ancestors(student)) & set(zygotes), "the student is not a fork of the server's zygote"
    finally:
        client.kill()
        client.wait()
    end = time.monotonic() + WAIT
    while left_under(server) and time.monotonic() < end:
        time.sleep(0.05)
    assert left_under(server) == []  # the killed grade's fork went with its channel
    assert server.zygotes() == zygotes and all(alive(pid) for pid in zygotes)


LEAVES_STATE = """
import json, os, random, sys, types
sys.modules["planted_by_first"] = types.ModuleType("planted_by_first")
json.PLANTED = True
random.seed(7)
with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "left_behind"), "w") as handle:
    handle.write("first student")
if os.fork() == 0:  # a process left behind, out of its parent's session
    os.setsid()
    if os.fork() == 0:
        import time
        time.sleep(600)
    os._exit(0)
"""
LOOKS_FOR_STATE = """
import json, os, sys
left = any("left_behind" in files for _, _, files in os.walk("/tmp"))
print("SEEN", "planted_by_first" in sys.modules, hasattr(json, "PLANTED"), left)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="a root server forks its grades' workers from its zygotes")
def test_hostile_served_grades_reach_neither_the_server_its_zygotes_nor_the_grades_after_them(server: Served) -> None:
    zygotes = server.zygotes()
    solution = (PROJECT / "reference" / "solutions" / "tree.py").read_text()
    first, checker = server.folder / "leaves_state.py", server.folder / "looks_for_state.py"
    first.write_text(LEAVES_STATE + solution)
    checker.write_text(LOOKS_FOR_STATE + solution)
    hostile = [HOSTILE / "kills_ancestors.py", HOSTILE / "kills_parent.py", HOSTILE / "sleeping_children.py", first]
    before = server.counts()
    for submission in hostile:
        abgrade("grade", submission, "--lab", "tree", env=server.env, cwd=server.cwd)
        assert alive(server.pid) and server.zygotes() == zygotes, submission.name
    results = {}
    for way, env in (("served", server.env), ("cold", {**server.env, "ABGRADE_SERVER": "0"})):
        out = server.folder / f"{way}.json"
        done = abgrade("grade", checker, "--lab", "tree", "--json", out, env=env, cwd=server.cwd)
        results[way] = (done.stdout, done.stderr, done.returncode, json.loads(out.read_text()))
        results[way][3].pop("execution_time", None)
    assert "SEEN False False False" in results["served"][3]["output"], results["served"][3]["output"]
    assert results["served"] == results["cold"]
    assert server.counts() == (before[0] + len(hostile) + 1, before[1])
    end = time.monotonic() + WAIT
    while left_under(server) and time.monotonic() < end:
        time.sleep(0.05)
    assert left_under(server) == []


SLOW_BUT_CORRECT = "import time\ntime.sleep(2)  # the grade is in flight while the server is told to stop\n"


def lease_free(uid: int) -> bool:
    fd = os.open(os.path.join(LEASE_DIR, str(uid)), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def foreground_server(folder: Path) -> tuple[subprocess.Popen, dict[str, str], Path, Path]:
    """`abgrade serve` in the foreground, as from a terminal: the leader of its own process
    group (a terminal's Ctrl-C goes to the whole group), once it says it serves."""
    cwd = folder / "run"
    cwd.mkdir(exist_ok=True)
    env = environment(ABGRADE_SERVE_DIR=str(folder / "s"))
    process = subprocess.Popen(
        [sys.executable, "-m", "grader", "serve", "--idle", "600"],
        env=env,
        cwd=cwd,
        preexec_fn=lambda: (os.setpgid(0, 0), as_a_terminal_starts_it()),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(r"serving at (\S+) \(pid", line)
    assert found, (line, process.stderr.read() if process.poll() is not None else "")
    return process, env, cwd, Path(found[1])


@pytest.mark.timing
@pytest.mark.parametrize("how", ["SIGTERM", "Ctrl-C", "SIGKILL"])
def test_a_grade_in_flight_finishes_when_the_server_stops_or_dies_and_nothing_is_left(how: str) -> None:
    """The server told to stop (SIGTERM, a Ctrl-C to its process group) or killed: the
    grade in flight gives its client the cold grade's results, the server is gone at once,
    its zygotes once the grade ended, and nothing of the grade stays (process, uid lease);
    a server started on the same socket path after a SIGKILL serves."""
    folder = Path(tempfile.mkdtemp(prefix="abs-", dir="/tmp"))
    server, env, cwd, socket_path = foreground_server(folder)
    try:
        submission = folder / "slow.py"
        submission.write_text(SLOW_BUT_CORRECT + (PROJECT / "reference" / "solutions" / "tree.py").read_text())
        client = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "grader",
                "grade",
                str(submission),
                "--lab",
                "tree",
                "--json",
                str(folder / "served.json"),
            ],
            env=env,
            cwd=cwd,
            preexec_fn=as_a_terminal_starts_it,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        uid, end = None, time.monotonic() + WAIT
        while uid is None and time.monotonic() < end and client.poll() is None:
            uid = student_uid_under(server.pid)
            time.sleep(0.02)
        assert uid is not None, "no student process under the server"
        everything = descendants(server.pid)  # the grade's child, its student, the zygotes
        if how == "Ctrl-C":
            os.killpg(server.pid, signal.SIGINT)
        else:
            os.kill(server.pid, getattr(signal, how))
        server.communicate(timeout=WAIT)  # the server is gone before the grade ends
        assert client.poll() is None, "the grade ended with its server"
        stdout, stderr = client.communicate(timeout=WAIT)
        cold = abgrade(
            "grade",
            submission,
            "--lab",
            "tree",
            "--json",
            folder / "cold.json",
            env={**env, "ABGRADE_SERVER": "0"},
            cwd=cwd,
        )
        assert (stdout, stderr, client.returncode) == (cold.stdout, cold.stderr, cold.returncode)
        served, alone = (json.loads((folder / f"{way}.json").read_text()) for way in ("served", "cold"))
        served.pop("execution_time"), alone.pop("execution_time")
        assert served == alone and client.returncode == 0  # slow, and correct: every test passed
        end = time.monotonic() + WAIT
        while any(alive(pid) for pid in everything) and time.monotonic() < end:
            time.sleep(0.05)
        assert [pid for pid in everything if alive(pid)] == []
        assert lease_free(uid), "the student's uid is still leased"  # (or leased again meanwhile: rare)
        assert socket_path.exists() == (how == "SIGKILL")  # a stopped server removes it; a killed one can't
        if how == "SIGKILL":
            again = Served(folder)
            try:
                done = abgrade("grade", submission, "--lab", "tree", env=env, cwd=cwd)
                assert (done.stdout, done.returncode) == (cold.stdout, cold.returncode)
                assert again.counts() == (1, 0)
            finally:
                again.stop()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        shutil.rmtree(folder, ignore_errors=True)


COUNTS_OPENS = """
import os as _os

if _os.environ.get("ABGRADE_TEST_OPENS"):  # the grader's environment only (the student's is scrubbed)
    with open(_os.environ["ABGRADE_TEST_OPENS"], "a") as _handle:
        _handle.write("opened\\n")
"""


def test_a_served_grade_reads_a_lab_folder_as_often_as_a_cold_grade(folder: Path) -> None:
    """The served child opens the lab once to pick its zygote (grade_early.py) and the grade
    takes that instance: a lab folder's reference is loaded once, as in a cold grade."""
    lab = folder / "nim_counted"
    shutil.copytree(PROJECT / "examples" / "labs" / "nim", lab, dirs_exist_ok=True)
    with open(lab / "reference.py", "a") as handle:
        handle.write(COUNTS_OPENS)
    submission = PROJECT / "examples" / "labs" / "nim" / "variants" / "fail_hard.py"
    counter = folder / "opens"
    server = (
        Served(folder / "counted", ABGRADE_TEST_OPENS=str(counter)) if (folder / "counted").mkdir() is None else None
    )
    assert server is not None
    try:
        opens, outputs = {}, {}
        for way, env in (("served", server.env), ("cold", {**server.env, "ABGRADE_SERVER": "0"})):
            counter.write_text("")
            done = abgrade("grade", submission, "--lab", lab, env=env, cwd=server.cwd)
            outputs[way] = (done.stdout, done.stderr, done.returncode)
            opens[way] = counter.read_text().count("opened")
        assert server.counts() == (1, 0)
    finally:
        server.stop()
    assert outputs["served"] == outputs["cold"]
    assert opens["served"] == opens["cold"] >= 1


@pytest.mark.skipif(os.geteuid() != 0, reason="a root server forks its grades' workers from its zygotes")
def test_numpys_zygote_starts_on_the_first_grade_that_needs_it_whose_result_is_the_cold_one(folder: Path) -> None:
    """A server starts without numpy's zygote; the first tictactoe grade (its lab's observer
    imports numpy) asks for it and grades with a worker started the cold way, the next one
    forks its worker from it; both give the cold grade's output, and tree grades never
    start it."""
    (folder / "lazy").mkdir()
    server = Served(folder / "lazy")
    try:
        first = server.zygotes()
        assert len(first) == 1
        tree = abgrade(
            "grade", FIXTURES / "tree" / "bug_strict_cutoff.py", "--lab", "tree", env=server.env, cwd=server.cwd
        )
        assert tree.returncode == 1 and server.zygotes() == first
        submission = folder / "lazy" / "slow_tie_last.py"
        submission.write_text(SLOW_BUT_CORRECT + (FIXTURES / "tictactoe" / "bug_tie_last.py").read_text())
        cold = abgrade(
            "grade", submission, "--lab", "tictactoe", env={**server.env, "ABGRADE_SERVER": "0"}, cwd=server.cwd
        )
        served = abgrade("grade", submission, "--lab", "tictactoe", env=server.env, cwd=server.cwd)
        assert (served.stdout, served.stderr, served.returncode) == (cold.stdout, cold.stderr, cold.returncode)
        end = time.monotonic() + WAIT
        while len(server.zygotes()) < 2 and time.monotonic() < end:
            time.sleep(0.05)
        (numpys,) = set(server.zygotes()) - set(first)
        client = grade_client(server, submission, "tictactoe")
        student, end = None, time.monotonic() + WAIT
        while student is None and time.monotonic() < end and client.poll() is None:
            student = student_under(server)
            time.sleep(0.02)
        assert student is not None and numpys in ancestors(student), "the second grade did not fork from numpy's zygote"
        stdout, stderr = finished(client, server)
        assert (stdout, stderr, client.returncode) == (cold.stdout, cold.stderr, cold.returncode)
        assert server.counts() == (3, 0)
    finally:
        server.stop()


SERVER_UID = 61998  # outside the student pool (61000-61255), not tests/test_security.py's 61999


def _as_server_uid(*words: object, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """`python -m grader WORDS` as SERVER_UID, an unprivileged user (setpriv, from root)."""
    return subprocess.run(
        ["setpriv", f"--reuid={SERVER_UID}", f"--regid={SERVER_UID}", "--clear-groups"]
        + [sys.executable, "-m", "grader", *map(str, words)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=WAIT,
        preexec_fn=as_a_terminal_starts_it,
    )


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="root drops to a spare uid with setpriv")
def test_a_server_run_by_an_unprivileged_user_grades_as_that_users_cold_grades() -> None:
    """Not root: no zygote, the student in a user namespace of its own (first_spawn.py in
    the child). A correct and a failing file, served, give that user's cold results."""
    from grader.sandbox import acl
    from grader.sandbox import isolation as isolation_module

    if isolation_module.detect_isolation().level != "namespaces":
        pytest.skip("no user namespaces here: an unprivileged grader has no sandbox to serve")
    top = Path(tempfile.mkdtemp(prefix="abu-", dir="/tmp"))
    try:
        os.chmod(top, 0o755)
        cwd, sockets = top / "run", top / "s"
        cwd.mkdir(mode=0o755)
        sockets.mkdir(mode=0o700)
        os.chown(sockets, SERVER_UID, SERVER_UID)
        os.chown(cwd, SERVER_UID, SERVER_UID)
        files = {}
        for name in ("correct_fail_hard.py", "bug_strict_cutoff.py"):
            files[name] = top / name
            shutil.copy(FIXTURES / "tree" / name, files[name])
            os.chmod(files[name], 0o644)
        env = environment(ABGRADE_SERVE_DIR=str(sockets), HOME="/tmp", PYTHONPATH=str(PROJECT))
        readable = [*isolation_module.INTERPRETER_PATHS, str(PROJECT), str(top), sys.prefix]
        with acl.AclHold() as hold:  # the way to the interpreter and the project, for this test only
            hold.open_way_to_group(readable, SERVER_UID)
            started = _as_server_uid("serve", "--detach", "--idle", 600, env=env, cwd=cwd)
            assert started.returncode == 0, started.stdout + started.stderr
            try:
                results = {}
                for way, environ in (("served", env), ("cold", {**env, "ABGRADE_SERVER": "0"})):
                    for name, path in files.items():
                        done = _as_server_uid("grade", path, "--lab", "tree", env=environ, cwd=cwd)
                        results[way, name] = (done.stdout, done.stderr, done.returncode)
                status = _as_server_uid("serve", "--status", env=env, cwd=cwd).stdout
            finally:
                _as_server_uid("serve", "--stop", env=env, cwd=cwd)
        for name in files:
            assert results["served", name] == results["cold", name], name
        assert results["served", "correct_fail_hard.py"][2] == 0 and results["served", "bug_strict_cutoff.py"][2] == 1
        assert "own user namespace" in results["served", "correct_fail_hard.py"][0]
        assert "2 served, 0 sent cold" in status and "zygotes" not in status, status
    finally:
        shutil.rmtree(top, ignore_errors=True)
