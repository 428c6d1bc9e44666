"""Issue 23, point 1: no student process reaches the Dask cluster that grades it, at any
isolation level. The attack of the issue (tests/fixtures/hostile/takes_over_dask.py: read
the keys, connect to the scheduler, read the other students' tasks, patch the grader in
every worker) runs on a real scheduler and real workers on loopback, started with the
`dask` command-line tools and the credentials of `abgrade cluster certs`:

- with both guards switched off, on a plain cluster whose workers grade at the `process`
  level, it works (the issue's finding, kept as the control that shows the attack is real);
- a plain cluster with such workers is refused before any task, by the batch and by the
  workers themselves;
- at the `namespaces` level (plain cluster) and at the `process` level (TLS cluster, keys
  in a folder anyone may enter) it gains nothing, and the other students' scores equal
  their solo `abgrade grade` runs."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from grader.batch.executor import Job, JobResult
from grader.batch.task import GradeTask
from grader.results import GradeReport
from grader.sandbox.identity import grader_is_root
from grader.spec import load_spec

from .test_batch import abgrade_batch, scores
from .test_dask_batch import HAVE_DASK, Cluster

pytestmark = [
    pytest.mark.skipif(not HAVE_DASK, reason="dask[distributed] is not installed: pip install 'abgrade[dask]'"),
    pytest.mark.skipif(not grader_is_root(), reason="student uids (the process level's wall) need a root grader"),
    pytest.mark.slow,
]

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
TREE = TESTS / "fixtures" / "tree"
ATTACKER = TESTS / "fixtures" / "hostile" / "takes_over_dask.py"
HONEST = ["correct_fail_hard", "bug_strict_cutoff", "bug_no_pruning"]
SEED = 2323
PROCESS = {"ABGRADE_ISOLATION": "process"}
HAVE_NAMESPACES = subprocess.run(
    [sys.executable, "-c", "from grader.sandbox.isolation import detect_isolation as d; print(d().level)"],
    capture_output=True, text=True, cwd=PROJECT, env={**os.environ, "ABGRADE_ISOLATION": ""},
).stdout.strip() == "namespaces"  # fmt: skip


def make_spec(folder: Path) -> Path:
    """The tree lab's fixed cases and three hidden random ones, with room for the attacker
    to import distributed and try every connection before it is stopped."""
    spec = yaml.safe_load((TESTS / "fixtures" / "specs" / "tree_tight_limits.yaml").read_text())
    spec["limits"] = {"case_seconds": 10, "submission_seconds": 90, "load_seconds": 80, "memory_mb": 2048}
    spec["checks"]["random"] = {"points": 1, "visibility": "hidden"}
    spec["random"] = {"count": 3, "branching": [1, 3], "depth": [2, 4], "values": "int", "value_range": [-9, 9]}
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def attacker(folder: Path, cluster: Cluster) -> Path:
    keys = (
        [str(cluster.certs / f"{role}-key.pem") for role in ("scheduler", "worker", "client")] if cluster.certs else []
    )
    text = (
        ATTACKER.read_text()
        .replace("@SITE@", sysconfig.get_paths()["purelib"])
        .replace("@SCHEDULER@", cluster.address)
        .replace("@KEYS@", ",".join(keys))
    )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "attacker.py"
    path.write_text(text)
    return path


def a_class(folder: Path, cluster: Cluster) -> Path:
    """The honest students and the attacker, one file each."""
    attacker(folder, cluster)
    for name in HONEST:
        shutil.copyfile(TREE / f"{name}.py", folder / f"{name}.py")
    return folder


def solo_scores(folder: Path, spec: Path, out: Path) -> dict[str, float]:
    """Each file graded alone on this machine, by `abgrade grade`, with the batch's seed."""
    found = {}
    for path in sorted(folder.glob("*.py")):
        results = out / f"{path.stem}.json"
        subprocess.run(
            [sys.executable, "-m", "grader", "grade", str(path), "--lab", "tree", "--spec", str(spec),
             "--seed", str(SEED), "--json", str(results), "--quiet"],
            cwd=PROJECT, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        found[path.stem] = json.loads(results.read_text())["score"]
    return found


def grade_on(cluster: Cluster, path: Path, spec: Path, guarded: bool = True) -> JobResult:
    """One file graded on the cluster through the batch's executor (the report, with what
    the student printed, comes back whole). `guarded=False` skips the batch's check."""
    from distributed import Client

    from grader.batch.dask_pool import DaskPool, connect

    if guarded:
        pool = connect(cluster.address, tls=cluster.tls_files() if cluster.certs else None)
    else:
        pool = DaskPool(Client(cluster.address, timeout=30, set_as_default=False, security=cluster.security()), "x")
    results: list[JobResult] = []
    with pool:
        task = GradeTask("tree", load_spec(spec), SEED)
        pool.run([Job(path.stem, path)], task, 300.0, results.append, lambda running: None)
    (result,) = results
    return result


def gained(report: GradeReport) -> list[str]:
    return [line for line in report.student_output.splitlines() if line.startswith("GAINED")]


def blocked(report: GradeReport) -> list[str]:
    return [line for line in report.student_output.splitlines() if line.startswith("BLOCKED")]


def abgrade_tasks_seen(cluster: Cluster) -> int:
    """How many abgrade tasks the scheduler has ever been given."""
    from distributed import Client

    def count(dask_scheduler) -> int:  # noqa: ANN001
        prefix = dask_scheduler.task_prefixes.get("abgrade")
        return 0 if prefix is None else sum(prefix.state_counts.values())

    with Client(cluster.address, timeout=30, set_as_default=False, security=cluster.security()) as client:
        return client.run_on_scheduler(count)


def worker_guard_off() -> None:
    """Run on a worker: it takes itself for a `namespaces` worker (the control only)."""
    from grader.batch import remote

    remote._facts = {"worker": "control", "level": "namespaces", "root": True}


def start(folder: Path, workers: int, env: dict[str, str], certs: Path | None = None) -> Cluster:
    folder.mkdir(parents=True, exist_ok=True)
    cluster = Cluster(folder, env=env, certs=certs)
    try:
        cluster.start(workers)
    except BaseException:
        cluster.stop()
        raise
    return cluster


@pytest.fixture
def open_certs() -> Iterator[Path]:
    """`abgrade cluster certs` into a folder anyone may enter and list (mode 0755): only the
    keys' own mode keeps students out, as where a course keeps them in a shared place."""
    folder = Path(tempfile.mkdtemp(prefix="abgrade-test-certs-", dir="/var/tmp"))  # not /tmp: private to students
    try:
        done = subprocess.run(
            [sys.executable, "-m", "grader", "cluster", "certs", str(folder), "--force"],
            capture_output=True, text=True, cwd=PROJECT, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        folder.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --- the attack works where nothing stops it (the control) ------------------------------------


def test_unguarded_a_plain_cluster_of_process_level_workers_is_taken_over(tmp_path):
    """The issue's finding: both guards off, the attacker connects, reads the queue and
    patches the grader; a buggy student graded afterwards on that worker gets full marks."""
    spec = make_spec(tmp_path)
    cluster = start(tmp_path / "cluster", 1, PROCESS)
    try:
        from distributed import Client

        with Client(cluster.address, timeout=30, set_as_default=False) as client:
            client.run(worker_guard_off)
        attack = grade_on(cluster, attacker(tmp_path / "subs", cluster), spec, guarded=False)
        assert attack.failure is None, attack.failure
        assert "isolation: process" in " ".join(attack.value.notes)
        assert "GAINED connect plain" in gained(attack.value), attack.value.student_output
        assert any(line.startswith("GAINED patch [('tcp://") for line in gained(attack.value))
        buggy = tmp_path / "subs" / "bug_strict_cutoff.py"
        shutil.copyfile(TREE / "bug_strict_cutoff.py", buggy)
        forged = grade_on(cluster, buggy, spec, guarded=False).value
        honest = solo_scores(buggy.parent, spec, tmp_path)["bug_strict_cutoff"]
        assert honest < forged.max_score == forged.score  # forged
    finally:
        cluster.stop()


# --- refused before any task -----------------------------------------------------------------


def test_a_plain_cluster_of_process_level_workers_is_refused_before_any_task(tmp_path):
    spec = make_spec(tmp_path)
    cluster = start(tmp_path / "cluster", 1, PROCESS)
    try:
        folder = a_class(tmp_path / "class", cluster)
        done = abgrade_batch(folder, tmp_path / "out", *cluster.batch_args, spec=spec)
        assert done.returncode == 2, done.stderr
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("abgrade: dask worker tcp://127.0.0.1:")
        assert "grades at the `process` isolation level, where student code shares the worker's network" in line
        assert f"and {cluster.address}" in line and "let a process connect without a certificate" in line
        assert "--scheduler tls://HOST:PORT --tls-ca DIR/ca.pem" in line and "abgrade cluster certs DIR" in line
        assert not (tmp_path / "out").exists()
        assert abgrade_tasks_seen(cluster) == 0
        # a worker asked by nobody (one that joined after the batch's check) refuses by itself
        refused = grade_on(cluster, folder / "attacker.py", spec, guarded=False)
        assert refused.value is None and "UntrustedWorker: dask worker tcp://" in (refused.failure or "")
        assert "let a process connect without a certificate" in (refused.failure or "")
    finally:
        cluster.stop()


# --- the attack gains nothing ----------------------------------------------------------------


@pytest.mark.skipif(not HAVE_NAMESPACES, reason="this machine has no namespaces for student processes")
def test_at_the_namespaces_level_the_attacker_reaches_no_cluster(tmp_path):
    spec = make_spec(tmp_path)
    cluster = start(tmp_path / "cluster", 1, {"ABGRADE_ISOLATION": ""})
    try:
        folder = a_class(tmp_path / "class", cluster)
        attack = grade_on(cluster, folder / "attacker.py", spec).value
        assert "isolation: namespaces" in " ".join(attack.notes)
        assert gained(attack) == [], attack.student_output
        assert any("BLOCKED connect plain" in line for line in blocked(attack)), attack.student_output
        assert "SOCKET ENETUNREACH Network is unreachable" in attack.student_output.splitlines()
        _graded_as_alone(folder, spec, cluster, tmp_path)
    finally:
        cluster.stop()


@pytest.mark.skipif(not HAVE_NAMESPACES, reason="this machine has no namespaces for student processes")
def test_at_the_namespaces_level_the_workers_key_folder_is_hidden(tmp_path, open_certs):
    """Not only the key's mode: its folder is covered in the student's file system (a worker
    that is not root runs its students as its own user, in namespaces of their own)."""
    spec = make_spec(tmp_path)
    cluster = start(tmp_path / "cluster", 1, {"ABGRADE_ISOLATION": ""}, certs=open_certs)
    try:
        attack = grade_on(cluster, attacker(tmp_path / "subs", cluster), spec).value
        assert "isolation: namespaces" in " ".join(attack.notes)
        assert gained(attack) == [], attack.student_output
        for role in ("scheduler", "worker", "client"):
            assert f"BLOCKED key {open_certs}/{role}-key.pem FileNotFoundError" in blocked(attack)
        assert attack.score == solo_scores(tmp_path / "subs", spec, tmp_path)["attacker"]
    finally:
        cluster.stop()


def test_at_the_process_level_a_tls_cluster_keeps_the_attacker_out(tmp_path, open_certs):
    for key in open_certs.glob("*-key.pem"):
        assert stat.S_IMODE(key.stat().st_mode) == 0o600
    spec = make_spec(tmp_path)
    cluster = start(tmp_path / "cluster", 2, PROCESS, certs=open_certs)
    try:
        assert cluster.address.startswith("tls://")
        folder = a_class(tmp_path / "class", cluster)
        attack = grade_on(cluster, folder / "attacker.py", spec).value
        assert "isolation: process" in " ".join(attack.notes)
        assert gained(attack) == [], attack.student_output
        lines = blocked(attack)
        for role in ("scheduler", "worker", "client"):  # can't read the keys ...
            assert f"BLOCKED key {open_certs}/{role}-key.pem PermissionError" in lines, attack.student_output
        connects = [line for line in lines if line.startswith("BLOCKED connect")]
        assert [c.split()[2] for c in connects] == ["plain", "own"], attack.student_output  # ... nor connect
        assert "SOCKET connected" in attack.student_output.splitlines()  # though the network is shared
        _graded_as_alone(folder, spec, cluster, tmp_path)
    finally:
        cluster.stop()


def _graded_as_alone(folder: Path, spec: Path, cluster: Cluster, tmp_path: Path) -> None:
    """The whole class, attacker included, in one batch on the cluster: every score is the
    one its file gets alone, and the attacker's search still scores what it is worth."""
    done = abgrade_batch(folder, tmp_path / "out", *cluster.batch_args, "--seed", SEED, spec=spec)
    assert done.returncode == 0, done.stderr
    graded = {student: score for student, (status, score) in scores(tmp_path / "out").items()}
    alone = solo_scores(folder, spec, tmp_path)
    assert graded == alone
    assert alone["correct_fail_hard"] > max(alone["bug_strict_cutoff"], alone["bug_no_pruning"], alone["attacker"])
