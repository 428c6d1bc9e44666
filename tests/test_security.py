"""A patient attacker who knows Linux (issue: student code runs with no privileges). One
hostile fixture per class of attack, each run at every isolation level this machine
offers, asserting that the attacker gains nothing, that nothing outside its work folder
changed (the grader's files are compared before and after, module-wide), and, in a
batch, that honest students keep exactly the scores they get alone."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from grader.grading import grade_submission
from grader.labs import get_lab
from grader.sandbox import isolation as isolation_module
from grader.sandbox import session as session_module
from grader.sandbox.cgroup import StudentCgroups
from grader.sandbox.confine import closed_ancestors
from grader.sandbox.identity import STUDENT_GID, StudentIdentity, grader_is_root, hand_over
from grader.spec import load_spec

from .notebook_builder import notebook_from_py

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
HOSTILE = TESTS / "fixtures" / "hostile"
TREE = TESTS / "fixtures" / "tree"
SPEC = TESTS / "fixtures" / "specs" / "tree_hostile_limits.yaml"
HAVE_NAMESPACES = isolation_module.detect_isolation().level == "namespaces"
LEVELS = ["namespaces", "process"] if HAVE_NAMESPACES else ["process"]
LEVEL_OF = {"namespaces": isolation_module.NAMESPACES, "process": isolation_module.PROCESS}
HAVE_PIDS_CGROUP = "pids" in (probe := StudentCgroups()).paths
probe.remove()
needs_root = pytest.mark.skipif(not grader_is_root(), reason="a separate student uid needs a root grader")


pytestmark = pytest.mark.usefixtures("grader_files_untouched")


def _fixture(name: str, folder: Path, **replace: str) -> Path:
    unique = uuid.uuid4().hex[:10]
    text = (HOSTILE / name).read_text().replace("@PROJECT@", str(PROJECT)).replace("@UNIQUE@", unique)
    for key, value in replace.items():
        text = text.replace(f"@{key}@", value)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{Path(name).stem}_{unique}.py"
    path.write_text(text)
    return path


def grade(path: Path, level: str, monkeypatch):
    monkeypatch.setattr(session_module, "detect_isolation", lambda: LEVEL_OF[level])
    return grade_submission(path, get_lab("tree"), load_spec(SPEC), seed=1)


def _lines(report, word: str) -> list[str]:
    return [line for line in report.student_output.splitlines() if line.startswith(word)]


@pytest.mark.parametrize("level", LEVELS)
def test_mounts_cannot_be_undone_nor_capabilities_regained(tmp_path, monkeypatch, level):
    report = grade(_fixture("remounts.py", tmp_path / "subs"), level, monkeypatch)
    assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]
    assert _lines(report, "GAINED") == [], report.student_output
    assert len(_lines(report, "BLOCKED")) == 8


@pytest.mark.parametrize("level", LEVELS)
def test_patching_lazily_imported_report_writers_forges_nothing(tmp_path, level):
    """Through the CLI, in one run: the report writers are imported after the cases ran."""
    attacker = _fixture("patches_grader.py", tmp_path / "subs")
    env = {**os.environ, "ABGRADE_ISOLATION": level if level == "process" else ""}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "grade",
            str(attacker),
            "--lab",
            "tree",
            "--spec",
            str(SPEC),
            "--json",
            str(tmp_path / "r.json"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    results = json.loads((tmp_path / "r.json").read_text())
    assert results["score"] < results["extra_data"]["max_score"]
    assert (
        done.stdout.strip().splitlines()[-1] == f"Score: {results['score']:g} / {results['extra_data']['max_score']:g}"
    )
    assert "GAINED" not in done.stdout
    # and the next, unrelated submission is graded by an intact grader
    empty = tmp_path / "subs" / "empty.py"
    empty.write_text("")
    report = grade_submission(empty, get_lab("tree"), load_spec(SPEC), seed=1)
    assert report.score == 0


@pytest.mark.skipif(not HAVE_PIDS_CGROUP, reason="no pids cgroup can be made here")
@needs_root
@pytest.mark.parametrize("level", LEVELS)
def test_leaving_the_cgroup_is_refused_and_the_process_cap_holds(tmp_path, monkeypatch, level):
    report = grade(_fixture("escapes_cgroup.py", tmp_path / "subs"), level, monkeypatch)
    assert _lines(report, "GAINED") == [], report.student_output
    started = int(_lines(report, "STARTED")[0].split()[1])
    assert 0 < started < 64
    assert report.score == report.max_score


@pytest.mark.parametrize("level", LEVELS)
def test_filling_dev_shm_and_tmp_leaves_nothing_on_the_machine(tmp_path, monkeypatch, level):
    path = _fixture("fills_shm.py", tmp_path / "subs")
    unique = path.stem.rsplit("_", 1)[1]
    report = grade(path, level, monkeypatch)
    assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]
    for folder in ("/dev/shm", "/tmp"):
        assert not Path(f"{folder}/abgrade-fill-{unique}").exists()
    stopped = {line.split()[1]: int(line.split()[2]) for line in _lines(report, "STOPPED")}
    assert set(stopped) == {"/dev/shm", "/tmp"}, report.student_output  # nobody wrote 600 MB
    assert all(mb <= 64 for mb in stopped.values())


@pytest.mark.parametrize("level", LEVELS)
def test_secrets_of_the_grader_and_the_machine_cannot_be_read(tmp_path, monkeypatch, level):
    secret = Path.home() / f"abgrade-secret-{uuid.uuid4().hex[:8]}"
    secret.write_text("the secret first line\n")
    try:
        report = grade(_fixture("reads_secrets.py", tmp_path / "subs", SECRET=str(secret)), level, monkeypatch)
    finally:
        secret.unlink()
    assert report.score == report.max_score
    assert "the secret" not in report.student_output
    assert not any(secret.name in line for line in _lines(report, "READ"))
    read = [line for line in _lines(report, "READ") if not line.startswith("READ /root")]
    assert read == [], report.student_output
    if grader_is_root():
        assert len(_lines(report, "BLOCKED")) >= 4  # /etc/shadow too: the student is not root


def _batch(classroom: Path, level: str, timeout: float = 240) -> dict[str, float]:
    env = {**os.environ, "ABGRADE_ISOLATION": level if level == "process" else ""}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "batch",
            str(classroom),
            "--lab",
            "tree",
            "--spec",
            str(SPEC),
            "--jobs",
            "3",
            "--seed",
            "1",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    grades = Path(f"{classroom}-abgrade") / "grades.csv"
    assert grades.exists(), done.stdout + done.stderr
    with grades.open() as handle:
        return {row["student"]: float(row["score"] or "nan") for row in csv.DictReader(handle)}


def _alone(path: Path) -> float:
    return grade_submission(path, get_lab("tree"), load_spec(SPEC), seed=1).score


@needs_root
@pytest.mark.slow
@pytest.mark.parametrize("level", LEVELS)
def test_a_student_who_kills_its_ancestors_takes_down_no_grader(tmp_path, level):
    classroom = tmp_path / "class"
    classroom.mkdir()
    honest = {"alice": TREE / "correct_fail_hard.py", "bob": TREE / "bug_strict_cutoff.py"}
    for name, source in honest.items():
        (classroom / f"{name}.py").write_text(source.read_text())
    (classroom / "mallory.py").write_text((HOSTILE / "kills_ancestors.py").read_text())
    scores = _batch(classroom, level)
    for name in honest:
        assert scores[name] == _alone(classroom / f"{name}.py"), scores
    assert set(scores) == {"alice", "bob", "mallory"}


def _as_student(uid: int, gid: int, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", *argv], capture_output=True, text=True
    )


@needs_root
@pytest.mark.skipif(not Path("/usr/bin/setpriv").exists(), reason="needs setpriv")
def test_parallel_gradings_at_the_process_level_never_close_each_others_way():
    """A batch keeps every grading's work folder in a closed (0700) job folder inside a closed
    run folder. Opening the way for one grading must not close it for another (it once did,
    and a correct submission failed to load with PermissionError about one time in two), nor
    open it to the other's uid."""
    from grader.sandbox import acl

    gid, first, second = STUDENT_GID, 61990, 61991  # outside the pool: no lease is disturbed
    run = Path(tempfile.mkdtemp(prefix="abgrade-acl-test-"))  # under /tmp, which every user may traverse
    try:
        works = {}
        for uid in (first, second):
            job = run / f"j-{uid}"
            job.mkdir(mode=0o700)
            work = job / "work"
            work.mkdir()
            (work / "lab.py").write_text("x = 1\n")
            identity = StudentIdentity(uid, gid)
            hand_over(work, identity)
            works[uid] = work
        holds = {uid: acl.AclHold() for uid in works}
        for uid, work in works.items():  # the order of a batch: each grading opens its own way
            holds[uid].open_way(isolation_module.INTERPRETER_PATHS, [str(work)], gid, uid)
        for uid, work in works.items():
            read = _as_student(uid, gid, sys.executable, "-c", f"print(open({str(work / 'lab.py')!r}).read())")
            assert read.returncode == 0 and "x = 1" in read.stdout, read.stderr
        peek = _as_student(second, gid, "ls", str(works[first].parent))
        assert peek.returncode != 0, peek.stdout
        holds[first].release()  # the first grading ends: the second still reaches its own work
        read = _as_student(second, gid, "cat", str(works[second] / "lab.py"))
        assert read.returncode == 0 and "x = 1" in read.stdout, read.stderr
        holds[second].release()
        assert _as_student(second, gid, "cat", str(works[second] / "lab.py")).returncode != 0
    finally:
        shutil.rmtree(run)


ATTACK_CELL = r"""
import glob, json, os, socket, time
found = set()
end = time.monotonic() + 8
while time.monotonic() < end:
    for path in glob.glob("/tmp/abgrade-*/**", recursive=True) + glob.glob("@OUT@/*"):
        if path in found:
            continue
        found.add(path)
        if path.endswith(".sock"):
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(path)
                s.sendall(b'{"op": "loaded", "api": {}}\n' * 3)
                print("GAINED connect", path)
            except OSError as exc:
                print("BLOCKED connect", type(exc).__name__)
        elif os.path.isfile(path):
            try:
                with open(path, "a" if path.endswith((".sqlite", ".csv")) else "r") as handle:
                    print("GAINED open", path)
            except OSError as exc:
                print("BLOCKED open", type(exc).__name__)
    time.sleep(0.05)
"""


@pytest.mark.slow
@pytest.mark.parametrize("level", LEVELS)
def test_a_notebook_cannot_reach_other_gradings_in_a_batch(tmp_path, level):
    """Three notebooks graded at once: the attacker hunts for the other graders' sockets,
    connection files, work folders and the gradebook; the honest two keep their scores."""
    classroom = tmp_path / "class"
    classroom.mkdir()
    honest = {"alice": TREE / "correct_fail_hard.py", "bob": TREE / "bug_strict_cutoff.py"}
    for name, source in honest.items():
        notebook_from_py(source, classroom / f"{name}.ipynb")
    out = Path(f"{classroom}-abgrade")
    notebook_from_py(
        TREE / "correct_fail_hard.py", classroom / "mallory.ipynb", before=[ATTACK_CELL.replace("@OUT@", str(out))]
    )
    scores = _batch(classroom, level)
    for name in honest:
        assert scores[name] == _alone(classroom / f"{name}.ipynb"), scores
    feedback = "".join(p.read_text() for p in (out / "feedback").glob("mallory*.md"))
    assert "GAINED" not in feedback


GRADESCOPE_PROBE = """
import glob, os, sys
from math import inf

graph = {}
terminal_nodes = {}
LEAKS = []
for pattern in ("@ROOT@/source/*", "@ROOT@/results/*", "@SITE@/grader/specs/*.yaml", "@SITE@/reference/solutions/*.py"):
    for path in glob.glob(pattern):
        try:
            with open(path, "rb") as handle:
                LEAKS.append(os.path.basename(path) + ":" + handle.read(20).hex())
        except OSError:
            pass
    try:
        LEAKS += os.listdir(os.path.dirname(pattern))
    except OSError:
        pass


def alphabeta(node, alpha, beta, max_player):
    raise RuntimeError(("LEA" + "KED: " + " ".join(LEAKS)) if LEAKS else ("NOTHING" + "-READ"))
"""


@needs_root
@pytest.mark.slow
def test_gradescope_bundle_and_results_are_out_of_reach_at_the_process_level(tmp_path):
    """A fake /autograder: setup.sh installs the wheel (reference and specs inside), the
    student's code can't read the bundle, the installed package or the results."""
    from grader.course.gradescope_bundle import build_wheel

    from .test_gradescope_bundle import installed_autograder, run_script

    root, python = installed_autograder(tmp_path, build_wheel(PROJECT, tmp_path / "wheel"))
    site = subprocess.run(
        [str(python), "-c", "import grader, os; print(os.path.dirname(os.path.dirname(grader.__file__)))"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout.strip()
    (root / "results").mkdir(exist_ok=True)
    (root / "results" / "previous.json").write_text("{}")
    (root / "submission").mkdir()
    (root / "submission" / "lab.py").write_text(GRADESCOPE_PROBE.replace("@ROOT@", str(root)).replace("@SITE@", site))
    done = run_script(root / "source" / "run_autograder", root, python, ABGRADE_ISOLATION="process")
    assert done.returncode == 0, done.stdout + done.stderr
    text = (root / "results" / "results.json").read_text()
    assert "NOTHING-READ" in text and "LEAKED:" not in text


@pytest.mark.parametrize("level", LEVELS)
def test_each_layer_holds_on_its_own(tmp_path, monkeypatch, level):
    """What the kernel reports inside the student process: no capabilities in any set,
    no_new_privs, a seccomp filter, another uid (root graders), and at the namespaces level
    a private, size-capped /tmp and /dev/shm and read-only /proc/sys and cgroups."""
    report = grade(_fixture("reports_privileges.py", tmp_path / "subs"), level, monkeypatch)
    assert report.score == report.max_score
    status = {line.split()[1]: line.split()[2] for line in _lines(report, "STATUS")}
    assert {status[k] for k in ("CapInh:", "CapPrm:", "CapEff:", "CapAmb:")} == {"0000000000000000"}
    assert status["NoNewPrivs:"] == "1"
    if grader_is_root():
        assert status["CapBnd:"] == "0000000000000000"
        assert status["Uid:"] != "0" and status["Gid:"] != "0"
    if isolation_module.filter_program_available():
        assert status["Seccomp:"] == "2"
    assert _lines(report, "WROTE") == [], report.student_output
    namespaces = {line.split()[1]: line.split()[2] for line in _lines(report, "NAMESPACE")}
    for kind in ("ipc", "uts", "net", "pid", "mnt"):  # the README's table: own IPC, network, PID, ...
        own = os.readlink(f"/proc/self/ns/{kind}")
        assert (namespaces[kind] != own) == (level == "namespaces"), (kind, namespaces)
    if level == "namespaces":
        sizes = {line.split()[1]: int(line.split()[2]) for line in _lines(report, "SIZE")}
        assert sizes == {"/tmp": isolation_module.PRIVATE_TMP_MB, "/dev/shm": isolation_module.PRIVATE_TMP_MB}


NOT_ROOT_GRADER = r"""
import sys
from pathlib import Path
from grader.grading import grade_submission
from grader.labs import get_lab
from grader.spec import load_spec
for path in sys.argv[2:]:
    report = grade_submission(Path(path), get_lab("tree"), load_spec(Path(sys.argv[1])), seed=1)
    print("SCORE", report.score, report.max_score)
    print("NOTES", " ".join(report.notes))
    print(report.student_output)
"""
GRADER_UID = 61999  # outside the student pool (61000-61255)


@needs_root
@pytest.mark.skipif(not HAVE_NAMESPACES or not Path("/usr/bin/setpriv").exists(), reason="needs unshare and setpriv")
def test_a_grader_that_is_not_root_confines_students_in_their_own_user_namespace(tmp_path):
    """Without root there is no uid to switch to: the student gets its own user namespace,
    where the covers can't be removed and no capability is left."""
    from grader.sandbox import acl

    folder = tmp_path / "subs"
    paths = [_fixture(name, folder) for name in ("remounts.py", "reports_privileges.py")]
    os.chmod(tmp_path, 0o755)
    os.chmod(folder, 0o755)
    for path in paths:
        os.chmod(path, 0o644)
    readable = [*isolation_module.INTERPRETER_PATHS, str(PROJECT), str(tmp_path), sys.prefix]
    env = {key: value for key, value in os.environ.items() if not key.startswith("ABGRADE_")}
    with acl.AclHold() as hold:  # the way for the grader's uid, for this test only
        hold.open_way_to_group(readable, GRADER_UID)
        done = _run_as_grader(paths, env)
    out = done.stdout
    assert done.returncode == 0, done.stdout + done.stderr
    assert out.count("SCORE 8.0 8.0") == 2, out
    assert "isolation: namespaces (own user namespace" in out
    # setuid(0) "succeeds": it is uid 0 of its own namespace already, which maps to the grader's uid
    assert [line.split()[:3] for line in out.splitlines() if line.startswith("GAINED")] == [["GAINED", "setuid", "0"]]
    for key in ("CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"):
        assert f"STATUS {key} 0000000000000000" in out
    assert "STATUS NoNewPrivs: 1" in out and "WROTE" not in out


def _run_as_grader(paths: list[Path], env: dict[str, str]) -> subprocess.CompletedProcess:
    """The grader as an unprivileged user (GRADER_UID), grading `paths` in one process."""
    return subprocess.run(
        [
            "setpriv",
            f"--reuid={GRADER_UID}",
            f"--regid={GRADER_UID}",
            "--clear-groups",
            sys.executable,
            "-c",
            NOT_ROOT_GRADER,
            str(SPEC),
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
        env={**env, "HOME": "/tmp", "PYTHONPATH": str(PROJECT)},
    )


# --- no lasting change to the machine (issue 23, point 2) ---------------------------------

needs_getfacl = pytest.mark.skipif(not shutil.which("getfacl"), reason="needs getfacl (Debian package acl)")


def _acls(*paths: str) -> str:
    """getfacl's view of `paths`, byte for byte (the test compares it before and after)."""
    return subprocess.run(["getfacl", "-p", "--", *paths], capture_output=True, text=True, check=True).stdout


def _way_to(path: Path) -> list[str]:
    """Every folder from / down to `path`, `path` included."""
    return [str(p) for p in reversed([path, *path.parents])]


@needs_root
@needs_getfacl
@pytest.mark.skipif(not Path("/usr/bin/setpriv").exists(), reason="needs setpriv")
@pytest.mark.parametrize("level", LEVELS)
def test_a_closed_home_opened_for_a_grading_is_closed_again_after_it(tmp_path, monkeypatch, level):
    """A stand-in for root's 0700 home with the interpreter's files in it: a grading reaches
    them, and afterwards the ACLs of every folder on the way are byte-identical to before; a
    secret created there after that grading (mode 644, as files in a home are) stays
    unreadable to any student uid, and to the next student graded."""
    home = Path(tempfile.mkdtemp(prefix="abgrade-acl-home-"))  # 0700, in /tmp (open to all)
    try:
        site = home / "site"
        site.mkdir(mode=0o755)
        (site / "module.txt").write_text("on the way\n")
        os.chmod(site / "module.txt", 0o644)
        monkeypatch.setattr(isolation_module, "INTERPRETER_PATHS", (*isolation_module.INTERPRETER_PATHS, str(site)))
        way = [*_way_to(home), str(site), str(site / "module.txt")]
        before = _acls(*way)
        secret = home / f"secret-{uuid.uuid4().hex[:8]}"
        holes = {"WAY": str(site / "module.txt"), "SECRET": str(secret), "HOME": str(home)}
        first = grade(_fixture("reads_closed_home.py", tmp_path / "subs", **holes), level, monkeypatch)
        assert "REACHED on the way" in first.student_output, first.student_output
        assert first.score == first.max_score
        assert _acls(*way) == before

        secret.write_text("the secret of the home\n")
        os.chmod(secret, 0o644)
        secret_before = _acls(str(secret))
        peek = _as_student(61990, STUDENT_GID, "cat", str(secret))  # any student uid, outside a grading
        assert peek.returncode != 0 and "the secret" not in peek.stdout

        second = grade(_fixture("reads_closed_home.py", tmp_path / "subs", **holes), level, monkeypatch)
        out = second.student_output
        assert "REACHED on the way" in out, out
        assert "GAINED" not in out and "the secret" not in out and secret.name not in out, out
        assert second.score == second.max_score
        assert _acls(*way) == before
        assert _acls(str(secret)) == secret_before
    finally:
        shutil.rmtree(home)


def _quiet_acls(folders: list[str]) -> str:
    """getfacl of `folders` at a moment when no grading on the machine holds an entry in or
    under them (others' gradings borrow the same way while they run); taken under the
    machine-wide ACL lock, so nothing changes while it is read."""
    from grader.sandbox import acl

    deadline = time.monotonic() + 600  # another grading's hold ends with its grading
    while True:
        acl.sweep()  # what a killed grader left is given back first
        with acl.machine_lock():
            held = [p for p in acl.held_paths() if any(p == f or p.startswith(f + "/") for f in folders)]
            if not held:
                return _acls(*folders)
        assert time.monotonic() < deadline, f"other gradings kept holding {held[:3]}"
        time.sleep(0.2)


@needs_getfacl
@pytest.mark.parametrize("level", LEVELS)
def test_the_interpreter_in_a_closed_home_starts_and_its_way_is_closed_again(tmp_path, monkeypatch, level):
    """This machine's Python lives in root's 0700 home (/root/.pyenv/...): an unprivileged
    student still starts it, loads the standard library's C extensions and reads the
    interpreter's site-packages; and every folder on the way has the ACL it had before."""
    base = Path(sys.base_prefix).resolve()
    if not closed_ancestors([str(base)]):  # Debian's /usr/bin/python3: nothing to open
        pytest.skip(
            f"this Python ({base}) lives in no closed folder; the stand-in home of the test above covers the way"
        )
    way = _way_to(base)
    before = _quiet_acls(way)
    report = grade(_fixture("starts_python_from_closed_home.py", tmp_path / "subs"), level, monkeypatch)
    assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]
    said = _lines(report, "PYTHON")
    assert said and "site-packages: True" in said[0], report.student_output
    assert _quiet_acls(way) == before
