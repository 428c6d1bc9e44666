"""`abgrade batch --scheduler`: grading on a real dask.distributed cluster, a scheduler and
two workers started as processes on localhost with the `dask` command-line tools, as an
instructor starts them. The cluster's grades must be the local pool's, to the byte, and a
worker killed mid-grading must cost a retry, never a lost or doubled student. Without dask
installed, these tests are skipped (the ones that check the error saying so still run)."""

from __future__ import annotations

import csv
import gc
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from grader.batch.executor import ATTEMPTS, Job, JobResult
from grader.batch.remote import Payload, Raised, Reply, ShippedTask, grade_chunk, grade_payload
from grader.batch.task import GradeTask
from grader.sandbox.isolation import detect_isolation
from grader.sandbox.notebook import KernelStartError

from .notebook_builder import notebook_from_py
from .test_batch import abgrade_batch, rows, scores, wait_for_rows, write_batch_spec

try:
    import distributed  # noqa: F401

    HAVE_DASK = True
except ImportError:
    HAVE_DASK = False

needs_dask = pytest.mark.skipif(not HAVE_DASK, reason="dask[distributed] is not installed: pip install 'abgrade[dask]'")

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
FIXTURES = TESTS / "fixtures" / "tree"
SEED = 4242
# scores that don't depend on timing (hostile fixtures that hang are left to test_batch.py)
CLASS = [
    "correct_fail_hard",
    "correct_iterative",
    "correct_seed_style",
    "bug_strict_cutoff",
    "bug_no_pruning",
    "bug_min_at_root",
    "bug_reversed_children",
    "load_no_alphabeta",
    "hostile_error_after_def",
]
UID_NOTE = re.compile(r"uid \d+")  # each grading leases its own uid: the one thing that may differ
LEVEL = detect_isolation().level  # what the workers started here grade at


# --- a cluster on localhost ---------------------------------------------------------


def dask_command() -> list[str]:
    return [str(Path(sys.executable).with_name("dask"))]


@dataclass
class Cluster:
    folder: Path
    address: str = ""
    scheduler: subprocess.Popen | None = None
    workers: list[subprocess.Popen] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # for the workers (ABGRADE_ISOLATION=process)
    certs: Path | None = None  # a TLS cluster with the credentials of `abgrade cluster certs` there

    @property
    def scheduler_file(self) -> Path:
        return self.folder / "scheduler.json"

    def tls_args(self, role: str) -> list[object]:
        if self.certs is None:
            return []
        return ["--tls-ca-file", self.certs / "ca.pem", "--tls-cert", self.certs / f"{role}.pem",
                "--tls-key", self.certs / f"{role}-key.pem"]  # fmt: skip

    @property
    def batch_args(self) -> list[object]:
        """What `abgrade batch` needs to reach this cluster."""
        if self.certs is None:
            return ["--scheduler", self.address]
        return ["--scheduler", self.address, "--tls-ca", self.certs / "ca.pem", "--tls-cert",
                self.certs / "client.pem", "--tls-key", self.certs / "client-key.pem"]  # fmt: skip

    def security(self):  # noqa: ANN201 - distributed.Security, imported only with dask
        from distributed.security import Security

        if self.certs is None:
            return Security(require_encryption=False)
        return Security(
            require_encryption=True,
            tls_ca_file=str(self.certs / "ca.pem"),
            tls_client_cert=str(self.certs / "client.pem"),
            tls_client_key=str(self.certs / "client-key.pem"),
        )

    def tls_files(self):  # noqa: ANN201 - grader.batch.dask_pool.TlsFiles
        from grader.batch.dask_pool import TlsFiles

        assert self.certs is not None
        return TlsFiles(self.certs / "ca.pem", self.certs / "client.pem", self.certs / "client-key.pem")

    def start(self, workers: int) -> None:
        protocol = ["--protocol", "tls"] if self.certs else []
        self.scheduler = self._spawn(
            "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file",
            self.scheduler_file, *protocol, *self.tls_args("scheduler"),
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while not self.scheduler_file.exists():
            assert time.monotonic() < deadline, "the scheduler never wrote its file"
            assert self.scheduler.poll() is None, "the scheduler died"
            time.sleep(0.1)
        time.sleep(0.2)  # written, and complete
        self.address = json.loads(self.scheduler_file.read_text())["address"]
        for _ in range(workers):
            self.add_worker()
        self.wait_for_workers(workers)

    def add_worker(self) -> subprocess.Popen:
        worker = self._spawn(
            "worker", "--scheduler-file", self.scheduler_file, "--nworkers", "1", "--nthreads", "1",
            *self.tls_args("worker"), env=self.env,
        )  # fmt: skip
        self.workers.append(worker)
        return worker

    def wait_for_workers(self, count: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False, security=self.security()) as client:
            client.wait_for_workers(count, timeout=60)

    def _spawn(self, *args: object, env: dict[str, str] | None = None) -> subprocess.Popen:
        # a session of its own: SIGKILL of the group takes the nanny and its worker process
        # at once, as when a machine dies; PYTHONPATH: the workers import tests' tasks too
        env = {**os.environ, "PYTHONPATH": str(PROJECT), **(env or {})}
        log = (self.folder / f"{args[0]}-{len(self.workers)}.log").open("w")
        return subprocess.Popen(
            [*dask_command(), *map(str, args)], cwd=self.folder, stdout=log, stderr=log, env=env, start_new_session=True
        )

    def kill(self, process: subprocess.Popen) -> None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=30)

    def stop(self) -> None:
        for process in [*self.workers, *([self.scheduler] if self.scheduler else [])]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in [*self.workers, *([self.scheduler] if self.scheduler else [])]:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill(process)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    if not HAVE_DASK:
        pytest.skip("dask[distributed] is not installed: pip install 'abgrade[dask]'")
    folder = tmp_path_factory.mktemp("cluster")
    certs = None
    if LEVEL != "namespaces":  # plain tcp:// is refused with workers at the process level
        from grader.batch.certs import make_credentials, write_credentials

        certs = folder / "certs"
        write_credentials(certs, make_credentials())
    running = Cluster(folder, certs=certs)
    try:
        running.start(workers=2)
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def small_class(tmp_path_factory) -> tuple[Path, Path]:
    """Tree fixtures as `.py` files and one as a notebook in a folder of its own."""
    root = tmp_path_factory.mktemp("dask-class")
    folder = root / "submissions"
    folder.mkdir()
    for name in CLASS:
        shutil.copyfile(FIXTURES / f"{name}.py", folder / f"{name}.py")
    (folder / "nb_student").mkdir()
    notebook_from_py(FIXTURES / "bug_strict_cutoff.py", folder / "nb_student" / "lab.ipynb")
    return folder, write_batch_spec(root)


def exports(out: Path) -> dict[str, str]:
    """grades.csv and every feedback file, with the leased uid in the notes masked."""
    files = [out / "grades.csv", *sorted((out / "feedback").iterdir())]
    return {f.name: UID_NOTE.sub("uid N", f.read_text()) for f in files}


# --- without a cluster ----------------------------------------------------------------


def test_the_base_install_never_imports_dask():
    code = (
        "import sys, grader.cli, grader.commands.batch, grader.batch.runner, grader.batch.pool, grader.batch.remote; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT, check=True)
    assert done.stdout.strip() == "[]"


@needs_dask
def test_the_batch_imports_distributed_without_what_it_does_without():
    """numpy and jinja2 stay out of the batch process (a fifth of the import's CPU), and
    import normally afterwards."""
    code = (
        "import sys; from grader.batch import dask_pool; dask_pool._import_distributed(); "
        "from distributed import Client, wait; from distributed.security import Security; "
        "print(sorted(m for m in ('numpy', 'jinja2', 'tornado') if m in sys.modules)); "
        "import numpy, jinja2; print(numpy.zeros(2).sum(), sys.modules.get('jinja2') is jinja2)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT, check=True)
    assert done.stdout.splitlines() == ["['tornado']", "0.0 True"]


def test_a_module_hidden_from_an_import_that_needs_it_is_imported_after_all(tmp_path, monkeypatch):
    from grader.batch.dask_pool import import_without

    package = tmp_path / "abgrade_fake_dask"
    package.mkdir()
    (package / "__init__.py").write_text(
        "try:\n    import abgrade_fake_optional as optional\nexcept ImportError:\n    optional = None\n"
        "import abgrade_fake_needed\n"
    )
    (tmp_path / "abgrade_fake_optional.py").write_text("")
    (tmp_path / "abgrade_fake_needed.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    names = ("abgrade_fake_dask", "abgrade_fake_optional", "abgrade_fake_needed")
    for name in names:
        monkeypatch.delitem(sys.modules, name, raising=False)
    import_without("abgrade_fake_dask", ("abgrade_fake_optional",))  # it does without: kept out
    assert sys.modules["abgrade_fake_dask"].optional is None and "abgrade_fake_optional" not in sys.modules
    for name in names:
        sys.modules.pop(name, None)
    # it can't do without one: imported again plainly, with everything
    import_without("abgrade_fake_dask", ("abgrade_fake_optional", "abgrade_fake_needed"))
    assert sys.modules["abgrade_fake_dask"].optional is sys.modules["abgrade_fake_optional"]
    assert "abgrade_fake_needed" in sys.modules
    for name in names:
        sys.modules.pop(name, None)


def test_scheduler_without_dask_says_how_to_install_it(tmp_path, small_class):
    folder, _ = small_class
    code = (
        "import sys; sys.modules['distributed'] = None; from grader.cli import main; "
        f"sys.exit(main(['batch', {str(folder)!r}, '--lab', 'tree', '--scheduler', 'tcp://127.0.0.1:8786', "
        f"'--out', {str(tmp_path / 'out')!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT)
    assert done.returncode == 2
    assert done.stderr.strip() == "abgrade: --scheduler needs dask: pip install 'abgrade[dask]'"
    assert not (tmp_path / "out").exists()


@needs_dask
def test_bad_or_unreachable_scheduler_is_one_line_and_no_traceback(tmp_path, small_class):
    folder, _ = small_class
    bad = abgrade_batch(folder, tmp_path / "out", "--scheduler", "no-port-here")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().splitlines() == [
        "abgrade: --scheduler 'no-port-here' is not a scheduler address (missing port number in address "
        "'no-port-here'); give it as tcp://HOST:PORT"
    ]
    both = abgrade_batch(folder, tmp_path / "out", "--scheduler", "tcp://127.0.0.1:9", "--jobs", "2")
    assert both.returncode == 2 and "--jobs is for local graders" in both.stderr

    from grader.batch.dask_pool import DaskUnavailable, connect

    with pytest.raises(DaskUnavailable) as refused:
        connect("tcp://127.0.0.1:9", connect_seconds=1)  # the discard port: nothing listens
    assert refused.value.machine  # exit code 3
    assert str(refused.value).startswith("no dask scheduler answers at tcp://127.0.0.1:9")
    assert not (tmp_path / "out").exists()


def test_a_payload_is_graded_under_its_own_name_in_a_folder_that_is_then_removed(tmp_path, tight_spec, monkeypatch):
    from grader.batch import remote

    run_folder = tmp_path / "worker-run"
    run_folder.mkdir()
    monkeypatch.setattr(remote, "_run_folder", run_folder)  # this process plays a worker
    source = FIXTURES / "bug_strict_cutoff.py"
    task = GradeTask("tree", tight_spec, SEED, temp_root=tmp_path / "the-batch-machines")
    reply = grade_payload(task, Payload("k", "smith_12_lab.py", source.read_bytes()), "topic")
    assert isinstance(reply, Reply) and reply.seconds > 0
    same_name = tmp_path / "smith_12_lab.py"  # the name shows in the feedback: it must travel too
    shutil.copyfile(source, same_name)
    local = GradeTask("tree", tight_spec, SEED)(same_name)
    assert [(t.name, t.passed, t.output) for t in reply.value.tests] == [
        (t.name, t.passed, t.output) for t in local.tests
    ]
    assert reply.value.submission.endswith("/smith_12_lab.py")
    assert list(run_folder.iterdir()) == []  # the payload's folder and the job folder are gone
    # a file the batch machine could no longer read (gone since the scan) is graded as missing, as locally
    gone = grade_payload(task, Payload("k2", "gone.py", None), "topic").value
    local_gone = GradeTask("tree", tight_spec, SEED)(tmp_path / "gone.py")
    assert (gone.score, [(t.name, t.passed) for t in gone.tests]) == (
        local_gone.score,
        [(t.name, t.passed) for t in local_gone.tests],
    )
    assert list(run_folder.iterdir()) == []


@dataclass
class CountingTask:
    """Counts its own gradings: a run's task, prepared once per worker process, counts them all."""

    calls: int = 0
    closed: bool = False

    def __call__(self, path: Path) -> tuple[int, int, str]:
        self.calls += 1
        return id(self), self.calls, path.read_text()

    def close(self) -> None:
        self.closed = True


def test_a_worker_prepares_a_runs_task_once_and_never_lends_it_to_another_run(tmp_path, tight_spec, monkeypatch):
    from grader.batch import remote

    run_folder = tmp_path / "worker-run"
    run_folder.mkdir()
    monkeypatch.setattr(remote, "_run_folder", run_folder)
    monkeypatch.setattr(remote, "_prepared_tasks", {})
    first = ShippedTask.of("run-a", CountingTask())
    replies = [grade_payload(first, Payload(f"k{n}", f"s{n}.py", f"# {n}".encode()), "topic").value for n in range(3)]
    assert [calls for _, calls, _ in replies] == [1, 2, 3]  # one object for the run's every submission
    assert [text for _, _, text in replies] == ["# 0", "# 1", "# 2"]
    kept = remote._prepared_tasks[("run-a", first.digest)]
    other = ShippedTask.of("run-b", CountingTask())  # the same bytes under another run: its own object
    assert other.digest == first.digest
    owner, calls, _ = grade_payload(other, Payload("k", "s.py", b"#"), "topic").value
    assert calls == 1 and owner != replies[0][0]
    # what run-a's task still held is closed before another run grades here (a batch killed
    # before its end_run), and the task itself kept for run-a's next submissions
    assert kept.closed and remote._prepared_tasks[("run-a", first.digest)] is kept
    grade_payload(ShippedTask.of("run-c", CountingTask()), Payload("k", "s.py", b"#"), "topic")
    assert ("run-a", first.digest) not in remote._prepared_tasks  # the oldest run let go
    assert len(remote._prepared_tasks) == remote.RUNS_KEPT
    damaged = ShippedTask("run-d", first.data.replace(b"calls", b"callz"), first.digest)
    with pytest.raises(ValueError, match="damaged"):
        grade_payload(damaged, Payload("k", "s.py", b"#"), "topic")
    graded = ShippedTask.of("run-e", GradeTask("tree", tight_spec, SEED, temp_root=tmp_path / "the-batch-machines"))
    source = (FIXTURES / "bug_strict_cutoff.py").read_bytes()
    reports = [grade_payload(graded, Payload(f"k{n}", f"s{n}.py", source), "topic").value for n in range(2)]
    assert reports[0].score == reports[1].score
    prepared = remote._prepared_tasks[("run-e", graded.digest)]
    assert isinstance(prepared, GradeTask) and prepared.temp_root == run_folder and prepared._lab is not None
    remote._end_run("run-e")  # the batch's end: the last close-out, under way on a thread, is settled
    assert list(run_folder.iterdir()) == []


def test_a_hint_is_opened_ahead_its_job_graded_there_and_the_runs_end_closes_the_rest(
    tmp_path, tight_spec, monkeypatch
):
    import grader.sandbox.session as session_module
    from grader.batch import remote
    from grader.sandbox import worker_zygote

    run_folder = tmp_path / "worker-run"
    run_folder.mkdir()
    monkeypatch.setattr(remote, "_run_folder", run_folder)
    monkeypatch.setattr(remote, "_prepared_tasks", {})
    monkeypatch.setattr(remote, "_staged", {})
    monkeypatch.delenv("ABGRADE_KERNEL_AHEAD", raising=False)
    leased = []
    lease = session_module.lease
    monkeypatch.setattr(session_module, "lease", lambda: leased.append(lease()) or leased[-1])
    buggy, correct = (FIXTURES / "bug_strict_cutoff.py").read_bytes(), (FIXTURES / "correct_fail_hard.py").read_bytes()
    shipped = ShippedTask.of("run-h", GradeTask("tree", tight_spec, SEED, temp_root=tmp_path / "the-batch-machines"))
    try:
        first = grade_payload(shipped, Payload("k1", "a.py", buggy), "topic", Payload("k2", "b.py", correct)).value
        task = remote._prepared_tasks[("run-h", shipped.digest)]
        staged = remote._staged["k2"]
        ahead = task._ahead  # a `.py` file's session opens on a thread: awaited before it is looked at
        assert ahead is not None and ahead.opened() is not None and ahead.path == staged.path
        second = grade_payload(shipped, Payload("k2", "b.py", correct), "topic").value
        assert remote._staged == {} and task._ahead is None  # graded in the session opened for it
        solo = {}
        for name, data in (("a.py", buggy), ("b.py", correct)):
            (tmp_path / name).write_bytes(data)
            solo[name] = GradeTask("tree", tight_spec, SEED)(tmp_path / name)
        assert [(t.name, t.passed) for t in first.tests] == [(t.name, t.passed) for t in solo["a.py"].tests]
        assert [(t.name, t.passed) for t in second.tests] == [(t.name, t.passed) for t in solo["b.py"].tests]
        assert first.score < second.score == solo["b.py"].score
        # a hint whose job went to another worker: its file and its session go at the next grading
        grade_payload(shipped, Payload("k3", "c.py", buggy), "topic", Payload("k4", "d.py", correct))
        gone = remote._staged["k4"].path
        # its opening awaited first: the next grading removes the file of a hint it was not
        # given, and an opening thread that had not reached the file yet opens nothing for it
        elsewhere = task._ahead
        assert elsewhere is not None and elsewhere.opened() is not None and elsewhere.path == gone
        grade_payload(shipped, Payload("k5", "e.py", correct), "topic")
        assert not gone.exists() and remote._staged == {} and task._ahead is None
        remote._end_run("run-h")
        assert list(run_folder.iterdir()) == []  # every job folder and submission file removed
        assert len(leased) == 7  # k1, k2 (ahead), k3, k4 (ahead, never graded), k5, and the two solo gradings
        assert all(identity is None or identity._lease_fd is None for identity in leased)  # every uid given back
    finally:
        remote._end_run("run-h")
        worker_zygote.use(False)


@dataclass
class ChunkProbe:
    """For each file: its text and the look-ahead's answer (the next job's text); raises a
    machine problem for a file that says so."""

    _ask: object = None

    def look_ahead(self, ask) -> None:  # noqa: ANN001 - remote.py's answer to "my next job?"
        self._ask = ask

    def __call__(self, path: Path) -> tuple[str, str | None]:
        ahead = self._ask() if callable(self._ask) else None
        if path.read_text() == "raise":
            raise KernelStartError("could not start a Jupyter kernel: busy")
        return path.read_text(), ahead.read_text() if ahead is not None else None


def test_a_chunk_is_graded_in_turn_each_opening_the_next_and_stops_at_a_raise(tmp_path, monkeypatch):
    from grader.batch import remote

    run_folder = tmp_path / "worker-run"
    run_folder.mkdir()
    monkeypatch.setattr(remote, "_run_folder", run_folder)
    monkeypatch.setattr(remote, "_prepared_tasks", {})
    monkeypatch.setattr(remote, "_staged", {})
    shipped = ShippedTask.of("run-k", ChunkProbe())
    texts = ["a", "b", "c"]
    payloads = [Payload(f"k-{text}", f"{text}.py", text.encode()) for text in texts]
    outcomes = grade_chunk(shipped, payloads, "topic", Payload("k-d", "d.py", b"d"))
    assert all(isinstance(outcome, Reply) for outcome in outcomes)
    assert [outcome.value for outcome in outcomes] == [("a", "b"), ("b", "c"), ("c", "d")]  # type: ignore[union-attr]
    assert list(remote._staged) == ["k-d"]  # the chunk's hint, written ahead for the next chunk
    # a raise stops the chunk there: that one is retried by the batch, the rest never tried
    raising = [Payload("k-e", "e.py", b"e"), Payload("k-r", "r.py", b"raise"), Payload("k-f", "f.py", b"f")]
    first, raised, untried = grade_chunk(shipped, raising, "topic")
    assert isinstance(first, Reply) and first.value == ("e", "raise")
    assert isinstance(raised, Raised) and raised.failure == "KernelStartError: could not start a Jupyter kernel: busy"
    assert untried is None
    remote._end_run("run-k")
    assert remote._staged == {} and list(run_folder.iterdir()) == []


@dataclass
class FakeClient:
    """What DaskPool._fill asks of a client: submit() (recorded, nothing runs)."""

    sent: list[tuple[list[str], str | None]] = field(default_factory=list)  # (the chunk's files, its hint's)

    def submit(self, function, shipped, payloads, topic, hint, **options) -> str:  # noqa: ANN001
        self.sent.append(([payload.name for payload in payloads], hint.name if hint else None))
        return options["key"]


def test_chunks_shrink_with_the_queue_to_single_jobs_at_its_end(tmp_path, monkeypatch):
    """Sized by the gradings' time (at most CHUNK_MAX), then by what waits: one more job
    only while the workers' windows times the chunk's size wait, so the tail goes one by one."""
    from grader.batch import dask_pool
    from grader.batch.executor import JobQueue

    monkeypatch.delenv(dask_pool.CHUNK_ENV, raising=False)
    files = []
    for number in range(40):
        files.append(tmp_path / f"s{number:02d}.py")
        files[-1].write_text("#")
    client = FakeClient()
    pool = dask_pool.DaskPool(client, "tcp://fake:1")  # type: ignore[arg-type]
    assert pool._chunk_most() == 1  # nothing measured yet: one job a task (a notebook's size)
    pool._note(0.1)
    assert pool._chunk_most() == min(dask_pool.CHUNK_MAX, int(dask_pool.CHUNK_SECONDS / 0.1))
    pool._note(5.0)
    assert pool._chunk_most() == 1
    pool._per_job = 0.001
    assert pool._chunk_most() == dask_pool.CHUNK_MAX
    shipped = ShippedTask.of("run-f", ChunkProbe())
    jobs = [Job(path.name, path) for path in files]
    queue, running, kept = JobQueue(jobs), {}, {}  # type: ignore[var-annotated]
    workers = ["w1", "w2"]
    while queue or kept:
        pool._fill(queue, running, kept, workers, shipped, "topic", time.monotonic())
        running.popitem()  # one chunk ends at a time: its worker gets room for the next
    sizes = [len(names) for names, _ in client.sent]
    assert sorted(name for names, _ in client.sent for name in names) == [path.name for path in files]  # each once
    assert max(sizes) == dask_pool.CHUNK_MAX and sizes[-4:] == [1, 1, 1, 1]
    assert sizes == sorted(sizes, reverse=True)  # never larger than the one before
    assert all(job.attempts == 1 for job in jobs)
    hints = [hint for _, hint in client.sent if hint]
    assert len(hints) == len(set(hints)) and set(hints) <= {names[0] for names, _ in client.sent}
    monkeypatch.setenv(dask_pool.CHUNK_ENV, "3")
    assert dask_pool.fixed_chunk() == 3
    monkeypatch.setenv(dask_pool.CHUNK_ENV, "0")
    assert dask_pool.fixed_chunk() is None


# --- on the cluster -------------------------------------------------------------------


@dataclass
class FlakyTask:
    """Raises a machine problem on the first `fails` attempts of each file (counted in
    files beside it, which the workers on this machine share), then returns its name."""

    marks: Path
    fails: int

    def __call__(self, path: Path) -> str:
        mark = self.marks / path.name
        tries = int(mark.read_text()) + 1 if mark.exists() else 1
        mark.write_text(str(tries))
        if tries <= self.fails:
            raise KernelStartError("could not start a Jupyter kernel: busy")
        return path.read_text()


@needs_dask
def test_machine_problems_on_the_cluster_are_retried_like_the_local_pool(cluster, tmp_path):
    from grader.batch.dask_pool import connect

    files = []
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(f"# {name}\n")
        files.append(tmp_path / name)
    marks = tmp_path / "marks"
    marks.mkdir()
    results: list[JobResult] = []
    with connect(cluster.address, tls=cluster.tls_files() if cluster.certs else None) as pool:
        assert pool.workers == 2
        pool.run([Job("once", files[0])], FlakyTask(marks, 1), 60.0, results.append, lambda running: None)
        pool.run([Job("always", files[1])], FlakyTask(marks, 99), 60.0, results.append, lambda running: None)
    once, always = results
    assert (once.value, once.failure, once.job.attempts) == ("# a.py\n", None, 2)
    assert always.value is None and always.machine and always.job.attempts == ATTEMPTS
    assert "KernelStartError: could not start a Jupyter kernel: busy" in (always.failure or "")


@dataclass
class AheadProbe:
    """Answers, for each job, where it was graded and which job the look-ahead gave it
    (the hint: the job the batch sends that worker next)."""

    _ask: object = None
    closed: bool = False

    def look_ahead(self, ask) -> None:  # noqa: ANN001 - remote.py's answer to "my next job?"
        self._ask = ask

    def close(self) -> None:
        self.closed = True

    def __call__(self, path: Path) -> tuple[int, str, str | None]:
        ahead = self._ask() if callable(self._ask) else None
        return os.getpid(), path.read_text(), ahead.read_text() if ahead is not None else None


def left_open_here() -> list[str]:
    """What a worker still keeps of a run of AheadProbe: staged submissions, unclosed tasks."""
    from grader.batch import remote

    probes = [task for task in remote._prepared_tasks.values() if isinstance(task, AheadProbe)]
    return sorted(remote._staged) + ["an AheadProbe not closed" for task in probes if not task.closed]


@needs_dask
def test_each_worker_is_sent_its_next_job_with_the_one_before_and_the_run_ends_clean(cluster, tmp_path):
    from grader.batch.dask_pool import connect

    files = []
    for number in range(10):
        files.append(tmp_path / f"s{number}.py")
        files[-1].write_text(f"s{number}")
    results: list[JobResult] = []
    with connect(cluster.address, tls=cluster.tls_files() if cluster.certs else None) as pool:
        pool.run([Job(p.name, p) for p in files], AheadProbe(), 60.0, results.append, lambda running: None)
        assert sorted(r.value[1] for r in results) == sorted(p.read_text() for p in files)  # each once
        by_worker: dict[int, list[tuple[str, str | None]]] = {}
        for result in results:  # a worker's results come back in the order it graded them
            pid, graded, ahead = result.value
            by_worker.setdefault(pid, []).append((graded, ahead))
        followed = [
            ahead == after for jobs in by_worker.values() for (_, ahead), (after, _) in zip(jobs, jobs[1:]) if ahead
        ]
        assert any(followed)  # the hint was the job that worker graded next (unless the scheduler moved it)
        hints = [ahead for _, _, ahead in (r.value for r in results) if ahead]
        assert set(hints) <= {p.read_text() for p in files} and len(hints) == len(set(hints))
        assert len(hints) <= len(files) - pool.workers  # none once fewer jobs wait than there are workers
        deadline = time.monotonic() + 30
        while any(pool.client.run(left_open_here).values()):  # end_run is not waited for: it comes soon after
            assert time.monotonic() < deadline, pool.client.run(left_open_here)
            time.sleep(0.1)
        # each worker process froze its modules' objects once, before its first grading (remote._freeze_once)
        assert all(count > 0 for count in pool.client.run(gc.get_freeze_count).values())


@dataclass
class HangingTask:
    """Returns each file's text at once, except a file that says "hang": it never returns."""

    def __call__(self, path: Path) -> str:
        if path.read_text() == "hang":
            time.sleep(3600)
        return path.read_text()


@needs_dask
@pytest.mark.slow
def test_a_job_past_its_deadline_fails_alone_and_the_rest_of_its_chunk_is_graded_once(cluster, tmp_path, monkeypatch):
    """The chunk with the hanging job is cancelled and its worker restarted; the jobs before
    and after it in that chunk go back to the queue, their attempts untouched, and are
    graded once elsewhere."""
    from grader.batch.dask_pool import CHUNK_ENV, connect

    monkeypatch.setenv(CHUNK_ENV, "4")
    files = []
    for number in range(12):
        files.append(tmp_path / f"s{number:02d}.py")
        files[-1].write_text("hang" if number == 1 else f"s{number}")  # in the first chunk: s00, s01, s02
    results: list[JobResult] = []
    with connect(cluster.address, tls=cluster.tls_files() if cluster.certs else None) as pool:
        pool.run([Job(p.name, p) for p in files], HangingTask(), 5.0, results.append, lambda running: None)
        pool.client.wait_for_workers(2, timeout=60)  # the restarted one is back, for the tests after this
    by_job = {result.job.key: result for result in results}
    assert sorted(by_job) == [p.name for p in files] and len(results) == len(files)  # each once
    hung = by_job.pop("s01.py")
    assert hung.value is None and "grading took longer than 5 s; the dask worker was restarted" in (hung.failure or "")
    assert {key: (r.value, r.failure) for key, r in by_job.items()} == {
        p.name: (p.read_text(), None) for p in files if p.name != "s01.py"
    }
    assert by_job["s00.py"].job.attempts == by_job["s02.py"].job.attempts == 1


@needs_dask
@pytest.mark.slow
def test_cluster_grades_exactly_as_the_local_pool(cluster, small_class, tmp_path, monkeypatch):
    folder, spec = small_class
    monkeypatch.setenv("ABGRADE_DASK_CHUNK", "4")  # chunks from the first job on: a notebook among `.py` files
    local = abgrade_batch(folder, tmp_path / "local", "--jobs", 2, "--seed", SEED, spec=spec)
    assert local.returncode == 0, local.stderr
    remote = abgrade_batch(folder, tmp_path / "dask", *cluster.batch_args, "--seed", SEED, spec=spec)
    assert remote.returncode == 0, remote.stderr
    assert f"with 2 dask worker(s) at {cluster.address} (isolation: {LEVEL}), seed {SEED}" in remote.stderr
    assert exports(tmp_path / "dask") == exports(tmp_path / "local")
    assert rows(tmp_path / "dask", "SELECT jobs, seed, status FROM runs") == [(2, SEED, "complete")]
    with (tmp_path / "dask" / "grades.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == len(CLASS) + 1
    again = abgrade_batch(folder, tmp_path / "dask", *cluster.batch_args, spec=spec)
    assert again.returncode == 0 and f"{len(CLASS) + 1} submissions in {folder}, 0 to grade" in again.stderr


def grading_on(worker: subprocess.Popen) -> bool:
    """Whether a worker is grading: it has a descendant in a session of its own (a student
    process; the worker's own processes share its group)."""
    parents: dict[int, int] = {}
    groups: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            parents[int(entry.name)], groups[int(entry.name)] = int(fields[1]), int(fields[2])
    family, grown = {worker.pid}, True
    while grown:
        more = {pid for pid, parent in parents.items() if parent in family and pid not in family}
        family |= more
        grown = bool(more)
    return any(groups.get(pid) != worker.pid for pid in family)


def slow_class(tmp_path: Path, count: int = 10) -> tuple[Path, Path, list[str]]:
    """Students whose files take a while to load (a kill lands mid-grading): the odd ones
    correct, the even ones buggy; the class folder, its spec and the students."""
    spec = write_batch_spec(tmp_path)
    folder = tmp_path / "slow"
    folder.mkdir()
    students = [f"s{n:02d}" for n in range(count)]
    for number, student in enumerate(students):
        source = FIXTURES / ("correct_fail_hard.py" if number % 2 else "bug_strict_cutoff.py")
        (folder / f"{student}.py").write_text("import time\ntime.sleep(0.6)\n" + source.read_text())
    return folder, spec, students


@needs_dask
@pytest.mark.slow
def test_a_batch_killed_mid_run_on_the_cluster_is_resumed_by_the_same_command(cluster, tmp_path, monkeypatch):
    """SIGKILL of the batch while the workers hold its jobs in chunks, their hints and what
    their task opened ahead: the same command grades the rest, each student once, as solo."""
    folder, spec, students = slow_class(tmp_path, count=6)
    monkeypatch.setenv("ABGRADE_DASK_CHUNK", "2")
    out = tmp_path / "out"
    batch = abgrade_batch(folder, out, *cluster.batch_args, "--seed", SEED, spec=spec, popen=True)
    wait_for_rows(out, 1, batch)
    batch.kill()
    batch.communicate(timeout=60)
    again = abgrade_batch(folder, out, *cluster.batch_args, spec=spec)
    assert again.returncode == 0, again.stderr
    assert "was killed before it ended (marked killed)" in again.stderr
    assert rows(out, "SELECT count(*), count(DISTINCT student) FROM submissions") == [(6, 6)]
    graded = scores(out)
    maximum = rows(out, "SELECT max(max_score) FROM submissions")[0][0]
    assert all(status == "graded" for status, _ in graded.values())
    assert [graded[s][1] == maximum for s in students] == [bool(n % 2) for n in range(6)]


@needs_dask
@pytest.mark.slow
def test_a_worker_killed_mid_grading_costs_a_retry_not_a_student(cluster, tmp_path, monkeypatch):
    """Last in this file: it leaves the cluster one worker short (and adds one back). The
    chunks hold up to 3 students: the one killed mid-grading is graded again whole on
    another worker, and each of its students recorded once."""
    folder, spec, students = slow_class(tmp_path)
    monkeypatch.setenv("ABGRADE_DASK_CHUNK", "3")
    out = tmp_path / "out"
    batch = abgrade_batch(folder, out, *cluster.batch_args, "--seed", SEED, spec=spec, popen=True)
    wait_for_rows(out, 2, batch)
    victim = cluster.workers[0]
    deadline = time.monotonic() + 30
    while not grading_on(victim):
        assert time.monotonic() < deadline and batch.poll() is None, "the worker never graded"
        time.sleep(0.02)
    cluster.kill(victim)
    cluster.workers.remove(victim)
    stdout, stderr = batch.communicate(timeout=120)
    cluster.add_worker()  # for whatever runs after
    assert batch.returncode == 0, stderr
    assert rows(out, "SELECT count(*), count(DISTINCT student) FROM submissions") == [(10, 10)]
    graded = scores(out)
    assert set(graded) == set(students) and all(status == "graded" for status, _ in graded.values())
    maximum = rows(out, "SELECT max(max_score) FROM submissions")[0][0]
    for number, student in enumerate(students):
        assert (graded[student][1] == maximum) == bool(number % 2), student
    progress = [line for line in stderr.splitlines() if line.startswith("[")]
    assert len(progress) == 10 and len({line.split("]")[1].split(":")[0] for line in progress}) == 10
    assert "10 graded, 0 not graded" in stdout
