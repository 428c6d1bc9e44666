"""The Dask executor (`abgrade batch ... --scheduler tcp://HOST:PORT`): each submission's
grading runs on a worker of a `dask.distributed` cluster (remote.py), and its result comes
back here, where the runner alone writes the gradebook.

Submissions travel in chunks: one task of the scheduler's grades a few of them in turn on
one worker (remote.grade_chunk), so the scheduler's per-task cost (the graph, its
transitions, the result fetched through it) is paid once per chunk. A chunk holds as many
jobs as take about CHUNK_SECONDS by the gradings so far (one until one is measured, so a
notebook class mostly goes one by one), at most CHUNK_MAX, and fewer as the queue empties
(_fill: single jobs at the end, so that no worker holds a long chunk while the others
idle). Results come back per chunk, one outcome per job.

Semantics are the local pool's (executor.py): every job ends in exactly one `on_result`,
a grading that raises (a machine problem) is tried again with a growing delay, ATTEMPTS in
all, and every send of a job has a key of its own (`abgrade-<run>-<student>-<attempt>-<n>`,
its chunk's `abgrade-<run>-c<n>`, `pure=False`: nothing is ever taken from the cluster's
memory of an earlier attempt or run). When a worker dies mid-chunk, the scheduler itself
runs the chunk again, whole, on another worker (that is the retry it costs), and it returns
once; after the scheduler's `allowed-failures` it gives up with KilledWorker, which counts
as one of each of its jobs' attempts. Either way one job is in one chunk at a time and has
one final result, and the gradebook replaces a student's row, so no student is lost or
doubled. The jobs of a chunk that were not graded through no fault of their own (after a
raise in it, or beside a job past its deadline) go back to the queue, their attempts as
they were.

The run's task (spec, seed, lab) is pickled once per run (remote.ShippedTask) and each
worker process keeps it prepared for the run's next submissions (remote.py), as a local
grader process keeps its task; each job's own bytes travel with its submission.

Every worker has a queue of its own here: two chunks on the cluster for it at a time (one
running, one ready to start), each sent to it (`workers=`, with `allow_other_workers`: if
it dies, the scheduler runs them elsewhere, the retry it costs), and one more job kept for
it here, whose payload travels with the chunk before as its last job's `hint` (within a
chunk each job's hint is the next): the worker opens it ahead while it grades that one (a
kernel started, a `.py` worker forked; remote.py), as a local grader process does with the
job it is given ahead. As in the local pool, a job is kept for a worker only while at
least as many jobs wait as there are workers (near the end of the batch another worker
could soon be idle), and the job kept for a worker that left goes back to the queue. The
submission bytes are read as they are sent, and a job's deadline counts from the moment a
worker announces that it has started it, not from when it was queued. A job past its
deadline fails, its chunk is cancelled and its worker restarted (its thread can't be
stopped otherwise; on a thread, while the batch goes on), as the local pool kills its
process. Ctrl-C cancels what is queued; the chunks already running on a worker end there
and are dropped (at most about CHUNK_SECONDS of gradings each, none in the gradebook).
However the run ends, every worker is told (`remote.end_run`), and closes what the run's
task opened ahead or still closes.

Before the first task the batch asks every worker, in one `client.run`, which abgrade it
runs, how it isolates students and, at the `process` level (students share the worker's network), whether the cluster refuses a
process without a certificate (cluster_trust.py): a plain `tcp://` cluster with such a worker
is refused (exit 2), as a student could take it over. `tls://` clusters are reached with
the client's certificate and key (`TlsFiles`; the key must be private: mode 0600).

dask is imported only here, and only when --scheduler is given."""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import os
import secrets
import stat
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cluster_trust import cluster_problem, key_exposure
from .executor import TICK_SECONDS, Job, JobQueue, JobResult, OnResult, OnTick, settle
from .remote import Payload, Raised, Reply, ShippedTask, end_run, grade_chunk, worker_facts

if TYPE_CHECKING:
    from distributed import Client, Future

CONNECT_SECONDS = 10.0  # a scheduler that doesn't answer by then is not there
WORKERS_SECONDS = 30.0  # a cluster with no worker yet gets this long to get one
WINDOW_PER_WORKER = 2  # jobs on the cluster per worker: one running, one ready to start
REFRESH_SECONDS = 2.0  # how often the workers (their queues) are asked again
# A chunk is one task of the scheduler's for several submissions, graded in turn on one
# worker: the scheduler's per-task round trips (the graph, the transitions, the result
# fetched through it) are paid once per chunk. Sized by the gradings so far to take about
# CHUNK_SECONDS (so a `.py` file's chunk holds a few, a notebook's one: the progress line
# and a Ctrl-C lag by at most that), and never more than CHUNK_MAX.
CHUNK_SECONDS = 1.0
CHUNK_MAX = 8
CHUNK_ENV = "ABGRADE_DASK_CHUNK"  # a fixed most per chunk instead (the benchmarks compare sizes)
# What `import distributed` tries to import and does without, which the batch machine never
# uses: numpy (a faster buffer for large messages; ours are small) and jinja2 (HTML views for
# notebooks). Hidden during the import when nothing loaded them before: a fifth of its CPU.
_OPTIONAL_FOR_THE_CLIENT = ("numpy", "jinja2")


class DaskUnavailable(Exception):
    """The cluster can't be used: one line for the user, naming the fix; `machine` when the
    cluster is not there (exit code 3), else the command or an install must change (2)."""

    def __init__(self, message: str, machine: bool = False) -> None:
        super().__init__(message)
        self.machine = machine


@dataclass(frozen=True)
class TlsFiles:
    """The batch machine's credentials for a `tls://` cluster (abgrade cluster certs DIR:
    ca.pem, client.pem, client-key.pem)."""

    ca: Path
    cert: Path
    key: Path


@dataclass
class _Running:
    """A chunk on the cluster: its jobs, in the order its worker grades them."""

    jobs: list[Job]
    keys: list[str]  # each job's payload key, which its worker announces as it starts it
    submitted: float
    worker: str  # the worker it was sent to (the scheduler moves it if that one dies)


@dataclass
class DaskPool:
    """An open connection to a cluster; close() it (or use it as a context manager)."""

    client: Client
    address: str
    levels: tuple[str, ...] = ()  # the isolation levels the workers said they grade at
    _started: dict[str, tuple[float, str]] = field(default_factory=dict)  # payload key -> (when, worker)
    _live: set[str] = field(default_factory=set)  # the payload keys on the cluster: the only ones announced
    _keys: dict[str, str] = field(default_factory=dict)  # job key -> its payload key, from taken to ended
    _serial: int = 0  # payload and chunk keys made this run: each one is new
    _per_job: float | None = None  # a grading's seconds on a worker, a running mean (sizes the chunks)
    _most: int | None = None  # jobs per chunk at most, fixed (CHUNK_ENV), else from _per_job

    @property
    def workers(self) -> int:
        return max(1, len(self.client.nthreads()))

    @property
    def where(self) -> str:
        levels = f" (isolation: {', '.join(self.levels)})" if self.levels else ""
        return f"{self.workers} dask worker(s) at {self.address}{levels}"

    def __enter__(self) -> DaskPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.client.close()

    def run(
        self, jobs: Iterable[Job], task: Callable[[Path], Any], deadline: float, on_result: OnResult, on_tick: OnTick
    ) -> None:
        from distributed import wait

        run = secrets.token_hex(8)
        shipped = ShippedTask.of(run, task)  # pickled once; each worker keeps it for the run (remote.py)
        topic = f"abgrade-started-{run[:8]}"
        self._most, self._per_job = fixed_chunk(), None  # a run's own gradings size its chunks
        self._keys.clear()
        self._live.clear()
        self._started.clear()
        self.client.subscribe_topic(topic, self._started_event)
        queue = JobQueue(jobs)  # read as the workers' queues have room: never the whole class at once
        running: dict[Future, _Running] = {}
        kept: dict[str, Job] = {}  # worker -> its next job, whose payload went with its chunk before as the hint
        workers, refreshed = self._addresses(), time.monotonic()
        try:
            while queue or running or kept:
                now = time.monotonic()
                if now - refreshed > REFRESH_SECONDS:
                    workers, refreshed = self._addresses(), now
                    for gone in [worker for worker in kept if worker not in workers]:
                        self._give_back(queue, kept.pop(gone), sent=False)
                self._fill(queue, running, kept, workers, shipped, topic, now)
                if running:
                    try:
                        with self.client.as_current():  # wait() looks for "the" client
                            wait(list(running), timeout=TICK_SECONDS, return_when="FIRST_COMPLETED")
                    except TimeoutError:
                        pass
                else:
                    time.sleep(TICK_SECONDS)  # only retries waiting for their delay
                ended: list[JobResult] = []
                for future, entry in list(running.items()):
                    results = self._collect(future, entry, deadline, queue)
                    if results is not None:
                        del running[future]
                        for key in entry.keys:
                            self._started.pop(key, None)
                            self._live.discard(key)
                        ended.extend(results)
                if ended:  # the workers' queues are topped up first; the gradebook's writes wait
                    self._fill(queue, running, kept, workers, shipped, topic, time.monotonic())
                for result in ended:
                    self._keys.pop(result.job.key, None)  # a retry is sent under a new key
                    settle(result, queue.retry, on_result)
                now = time.monotonic()
                on_tick([now - since for since, _ in filter(None, (self._current(e)[1] for e in running.values()))])
        finally:
            if running:
                self.client.cancel(list(running))
            self._end_run(run)
            self.client.unsubscribe_topic(topic)

    def _addresses(self) -> list[str]:
        return sorted(self.client.nthreads())

    def _fill(
        self,
        queue: JobQueue,
        running: dict[Future, _Running],
        kept: dict[str, Job],
        workers: list[str],
        shipped: ShippedTask,
        topic: str,
        now: float,
    ) -> None:
        """Top up every worker's queue to WINDOW_PER_WORKER chunks on the cluster, each sent
        with the job kept next for that worker (its last job's hint), when enough jobs wait.
        A chunk takes its first job, then one more (up to _chunk_most) only while at least
        as many jobs wait as every worker's window holds, times the chunk's size so far: the
        chunks shrink as the queue does, to one job near the end, so that no worker is left
        with a long chunk while the others idle. A worker with room when nothing else waits
        takes a job kept for another (near the end of the batch: no worker idles while a
        job waits here; the other's hint is closed unused)."""
        sent = Counter(entry.worker for entry in running.values())
        spare = max(1, len(workers)) * WINDOW_PER_WORKER
        most = self._chunk_most()
        for worker in workers or [""]:
            while sent[worker] < WINDOW_PER_WORKER:
                first = kept.pop(worker, None) or queue.take(now) or (kept.pop(next(iter(kept))) if kept else None)
                if first is None:
                    break
                chunk = [first]
                while len(chunk) < most and (more := queue.take_if_waiting(now, spare * len(chunk))) is not None:
                    chunk.append(more)
                following = queue.take_if_waiting(now, max(1, len(workers)))
                if following is not None:
                    kept[worker] = following
                future, keys = self._submit(chunk, shipped, topic, worker, following)
                running[future] = _Running(chunk, keys, now, worker)
                sent[worker] += 1

    def _chunk_most(self) -> int:
        """Jobs per chunk at most: fixed (CHUNK_ENV), else as many as take CHUNK_SECONDS by
        the gradings so far (1 until one is measured, and for notebooks: a second each)."""
        if self._most is not None:
            return self._most
        if self._per_job is None:
            return 1
        return max(1, min(CHUNK_MAX, int(CHUNK_SECONDS / max(self._per_job, 0.001))))

    def _note(self, seconds: float) -> None:
        self._per_job = seconds if self._per_job is None else 0.7 * self._per_job + 0.3 * seconds

    def _end_run(self, run: str) -> None:
        """Tell every worker the run is over (not waiting for them to close what it keeps)."""
        if self.client.status != "running":
            return  # the scheduler is gone: so are the run's workers, or they close it at their next grading
        try:
            self.client.run(end_run, run, wait=False, on_error="ignore")
        except Exception:  # noqa: BLE001 - the scheduler is gone: so are the run's workers, or they close it at their next grading
            pass

    def _started_event(self, event: tuple[float, Any]) -> None:
        """A worker started a job (remote.py announces it); runs on the client's own thread.
        Only a job on the cluster now counts (a late word of a chunk already ended doesn't)."""
        message = event[1]
        if isinstance(message, dict) and isinstance(message.get("key"), str) and message["key"] in self._live:
            self._started[message["key"]] = (time.monotonic(), str(message.get("worker", "")))

    def _current(self, entry: _Running) -> tuple[int, tuple[float, str] | None]:
        """The chunk's job its worker grades now (the one announced last: when its worker
        died and the scheduler runs the chunk again elsewhere, the new announcements, not
        the dead worker's later ones) and when it began there and where; (0, None) before
        the first is announced."""
        announced = [(started, number) for number, key in enumerate(entry.keys) if (started := self._started.get(key))]
        if not announced:
            return 0, None
        started, number = max(announced)
        return number, started

    def _submit(
        self, chunk: list[Job], shipped: ShippedTask, topic: str, worker: str, following: Job | None
    ) -> tuple[Future, list[str]]:
        """Send a chunk to `worker` (its last job's hint: `following`); the future and the
        chunk's payload keys."""
        payloads = []
        for job in chunk:
            key = self._key(shipped, job)  # made before its attempt counts: a hint's key is the one sent
            job.attempts += 1
            payloads.append(Payload(key, job.path.name, _read(job.path)))
        hint = None
        if following is not None:
            try:
                hint = Payload(self._key(shipped, following), following.path.name, following.path.read_bytes())
            except OSError:
                hint = None  # read again when it is sent, and reported there
        self._live.update(payload.key for payload in payloads)  # before its worker can announce one
        self._serial += 1
        where: dict[str, Any] = {"workers": [worker], "allow_other_workers": True} if worker else {}
        future = self.client.submit(
            grade_chunk, shipped, payloads, topic, hint, key=f"abgrade-{shipped.run[:8]}-c{self._serial}",
            pure=False, **where,
        )  # fmt: skip
        return future, [payload.key for payload in payloads]

    def _key(self, shipped: ShippedTask, job: Job) -> str:
        """The job's payload key from when it is taken (sent, or kept for a worker) until
        its attempt ends or it is given back: then the next send makes a new one, so a late
        word of an earlier send never passes for this one."""
        key = self._keys.get(job.key)
        if key is None:
            self._serial += 1
            student = hashlib.sha256(job.key.encode("utf-8", "surrogateescape")).hexdigest()[:16]
            key = self._keys[job.key] = f"abgrade-{shipped.run[:8]}-{student}-{job.attempts + 1}-{self._serial}"
        return key

    def _give_back(self, queue: JobQueue, job: Job, sent: bool = True) -> None:
        """A job taken and not graded, through no fault of its own (never sent, not reached
        in its chunk, or its chunk cut short by another's deadline): next in line again, its
        attempts as they were."""
        if sent:
            job.attempts -= 1
        self._keys.pop(job.key, None)
        queue.give_back(job)

    def _collect(self, future: Future, entry: _Running, deadline: float, queue: JobQueue) -> list[JobResult] | None:
        """The chunk's results if it ended: a result per job graded or failed (the jobs not
        reached are given back to the queue), or None while it runs within its deadline."""
        number, started = self._current(entry)
        since, worker = started or (entry.submitted, "")
        seconds = time.monotonic() - since
        if future.status == "finished":
            return self._results(future.result(), entry, queue, seconds)
        if future.status == "error":
            exc = future.exception()
            if type(exc).__name__ == "KilledWorker":
                failure, machine = f"the dask workers grading it died ({exc})", False
            else:
                failure, machine = f"{type(exc).__name__}: {exc}", True
            return [
                JobResult(job, failure=failure, seconds=seconds, retryable=True, machine=machine) for job in entry.jobs
            ]
        if future.status in ("cancelled", "lost"):
            failure = f"the dask task was {future.status} (its worker or the scheduler went away)"
            return [JobResult(job, failure=failure, seconds=seconds, retryable=True) for job in entry.jobs]
        if worker and seconds > deadline:
            future.cancel()
            self._restart(worker)
            for job in reversed([job for at, job in enumerate(entry.jobs) if at != number]):
                self._give_back(queue, job)  # graded or not, their results went with the task
            failure = f"grading took longer than {deadline:g} s; the dask worker was restarted"
            return [JobResult(entry.jobs[number], failure=failure, seconds=seconds)]
        return None

    def _results(self, outcomes: object, entry: _Running, queue: JobQueue, seconds: float) -> list[JobResult]:
        """A finished chunk's outcomes (remote.grade_chunk) as results, in its order."""
        if not isinstance(outcomes, list) or len(outcomes) != len(entry.jobs):
            failure = "the dask worker sent back no result"
            return [JobResult(job, failure=failure, seconds=seconds, retryable=True) for job in entry.jobs]
        results = []
        for job, outcome in zip(entry.jobs, outcomes):
            if isinstance(outcome, Reply):
                self._note(outcome.seconds)
                results.append(JobResult(job, value=outcome.value, seconds=outcome.seconds))
            elif isinstance(outcome, Raised):
                results.append(
                    JobResult(job, failure=outcome.failure, seconds=outcome.seconds, retryable=True, machine=True)
                )
        for job, outcome in reversed(list(zip(entry.jobs, outcomes))):
            if not isinstance(outcome, (Reply, Raised)):
                self._give_back(queue, job)  # after a raise in its chunk: never tried
        return results

    def _restart(self, worker: str) -> None:
        """A worker whose grading hangs past its deadline: its thread can't be stopped, its
        process can (by its nanny; the student processes die with it). Asked on a thread of
        its own: a restart takes seconds (7 s at load 18), which the batch spends feeding
        the other workers, as the local pool goes on while it replaces a killed process."""
        threading.Thread(target=self._restart_now, args=(worker,), name="abgrade-dask-restart", daemon=True).start()

    def _restart_now(self, worker: str) -> None:
        try:
            self.client.restart_workers([worker], raise_for_error=False)
        except Exception:  # noqa: BLE001 - no nanny, already gone, or the client closed: the scheduler copes
            pass


def _read(path: Path) -> bytes | None:
    """A submission's bytes, or None when it can't be read (gone since the scan): its
    worker then grades it as missing, as a local grader process would, never the batch
    stopped for one student's file."""
    try:
        return path.read_bytes()
    except OSError:
        return None


def fixed_chunk() -> int | None:
    """The most jobs per chunk CHUNK_ENV fixes (a whole number from 1), or None: sized by
    the gradings' time. Anything else is ignored (a benchmark's knob, not a user's)."""
    value = os.environ.get(CHUNK_ENV, "")
    return int(value) if value.isdigit() and int(value) >= 1 else None


def connect(address: str, connect_seconds: float = CONNECT_SECONDS, tls: TlsFiles | None = None) -> DaskPool:
    """A DaskPool on the scheduler at `address`, once it has a worker, every worker runs the
    same abgrade as this machine, and none would let its students reach the cluster. Raises
    DaskUnavailable (one line naming the fix) otherwise, before any task is sent."""
    _check_options(address, tls)  # a wrong option is said before dask's import (about a second)
    try:
        _import_distributed()
        from distributed import Client
    except ImportError:
        raise DaskUnavailable("--scheduler needs dask: pip install 'abgrade[dask]'") from None
    security = _security(address, tls)
    try:
        client = Client(address, timeout=connect_seconds, set_as_default=False, security=security)
    except (OSError, TimeoutError) as exc:
        raise DaskUnavailable(
            f"no dask scheduler answers at {address} ({type(exc).__name__}{_tls_hint(exc, tls)}); start one "
            "(`dask scheduler`) or give its address as --scheduler tcp://HOST:PORT (or tls://HOST:PORT)",
            machine=True,
        ) from None
    try:
        levels = _check_workers(client, address)
    except BaseException:
        client.close()
        raise
    return DaskPool(client, address, levels)


def _import_distributed() -> None:
    """`import distributed` without the modules it can do without (_OPTIONAL_FOR_THE_CLIENT)."""
    import_without("distributed", _OPTIONAL_FOR_THE_CLIENT)


def import_without(name: str, optional: tuple[str, ...]) -> None:
    """Import `name` with each of `optional` marked absent (a None in sys.modules, which
    makes its import raise ImportError) for the import's time only, so anything imported
    later gets the real one. When `name` needs one of them after all, it is imported again
    plainly (a module whose import raised is not kept)."""
    if name in sys.modules:
        return
    hidden = [module for module in optional if module not in sys.modules]
    for module in hidden:
        sys.modules[module] = None  # type: ignore[assignment]
    try:
        importlib.import_module(name)
    except ImportError:
        pass  # imported again below, with everything
    finally:
        for module in hidden:
            if sys.modules.get(module, False) is None:
                del sys.modules[module]
    importlib.import_module(name)


def _check_options(address: str, tls: TlsFiles | None) -> None:
    """The scheme of `address` and the TLS files that go with it, checked without dask: an
    address without one is tcp://, as dask reads it (its host and port: _security)."""
    scheme = address.split("://", 1)[0] if "://" in address else "tcp"
    if scheme not in ("tcp", "tls"):
        raise DaskUnavailable(f"--scheduler {address!r}: abgrade talks to tcp:// or tls:// schedulers only")
    if scheme == "tcp":
        if tls is not None:
            raise DaskUnavailable(
                "--tls-ca, --tls-cert and --tls-key are for a tls:// scheduler; give --scheduler tls://HOST:PORT"
            )
        return
    if tls is None:
        raise DaskUnavailable(
            f"--scheduler {address} needs this machine's credentials: --tls-ca DIR/ca.pem --tls-cert DIR/client.pem "
            "--tls-key DIR/client-key.pem (abgrade cluster certs DIR makes them)"
        )
    for option, path in (("--tls-ca", tls.ca), ("--tls-cert", tls.cert), ("--tls-key", tls.key)):
        if not path.is_file():
            raise DaskUnavailable(f"{option} {path}: no such file")
    exposed = key_exposure(str(tls.key))
    if exposed:
        mode = stat.S_IMODE(tls.key.stat().st_mode)
        raise DaskUnavailable(
            f"--tls-key {tls.key} can be read by others (mode {mode:04o}, or owned by a student uid): whoever reads it "
            f"controls the cluster; chmod 600 {tls.key}"
        )


def _security(address: str, tls: TlsFiles | None) -> Any:
    """Dask's Security for `address` (its options checked: _check_options): TLS with the
    batch's own certificate for `tls://`, none for `tcp://` (whether that is allowed
    depends on the workers: _check_trust)."""
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.security import Security

    try:  # checked first: Client() would spend its whole timeout on a malformed address
        _, location = parse_address(address)
        parse_host_port(location)
    except ValueError as exc:
        raise DaskUnavailable(
            f"--scheduler {address!r} is not a scheduler address ({exc}); give it as tcp://HOST:PORT"
        ) from None
    if tls is None:
        return Security(require_encryption=False)
    return Security(
        require_encryption=True, tls_ca_file=str(tls.ca), tls_client_cert=str(tls.cert), tls_client_key=str(tls.key)
    )


def _tls_hint(exc: BaseException, tls: TlsFiles | None) -> str:
    if tls is None:
        return ""
    return f": {exc}; check that {tls.cert} is signed by the cluster's CA, as in its scheduler's --tls-ca-file"


def _check_workers(client: Client, address: str) -> tuple[str, ...]:
    """Every worker must run this abgrade (another version might grade differently) and
    keep its students from reaching the cluster (cluster_trust.py): both asked in one
    `client.run`; the isolation levels found, or DaskUnavailable."""
    try:
        client.wait_for_workers(1, timeout=WORKERS_SECONDS)
    except TimeoutError:
        raise DaskUnavailable(
            f"the dask scheduler at {address} has no worker after {WORKERS_SECONDS:g} s; start some "
            f"(dask worker {address} --nthreads 1)",
            machine=True,
        ) from None
    found = client.run(worker_facts, on_error="return")
    mine = importlib.metadata.version("abgrade")
    wrong = {worker: _version(answer) for worker, answer in found.items() if _version(answer) != mine}
    if wrong:
        worker, version = sorted(wrong.items())[0]
        found_there = f"abgrade {version}" if version else "no abgrade (or one that can't say its version)"
        raise DaskUnavailable(
            f"dask worker {worker} has {found_there}, this machine abgrade {mine} ({len(wrong)} of {len(found)} "
            f"workers differ); install the same abgrade on every worker (pip install 'abgrade[dask]')",
        )
    problem = cluster_problem(found)
    if problem:
        raise DaskUnavailable(problem)
    return tuple(sorted({answer["level"] for answer in found.values()}))


def _version(answer: object) -> str | None:
    """The abgrade a worker said it runs (worker_facts), or None: it raised (no abgrade
    there, or one without worker_facts) or answered something else."""
    version = answer.get("abgrade") if isinstance(answer, dict) else None
    return version if isinstance(version, str) else None
