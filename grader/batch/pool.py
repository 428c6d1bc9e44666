"""A pool of grader processes that outlives its workers.

Each worker is a separate process (judging is CPU-bound Python and nbclient runs its own
asyncio loop, so threads would not do) that takes one job at a time over its own pipe.
`multiprocessing.Pool` loses the task of a worker that dies (its result never comes) and
`ProcessPoolExecutor` breaks every pending future; here the parent watches each worker's
pipe and process sentinel itself: a worker that dies or outlives the deadline is killed
and replaced, its job retried or reported as failed, and the other workers go on.

Workers are forked straight from the batch process when it has a single thread (the CLI:
nothing of Jupyter or asyncio lives there, and forking saves starting a fork server, about
0.3 s a run), else from a fork server. They ignore Ctrl-C (the batch decides what an
interrupt stops) and die with their parent (PR_SET_PDEATHSIG), so that SIGKILL of the batch
leaves no grader behind; the student processes a worker starts die with it in turn.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, TypeAlias

from ..sandbox.limits import die_with_grader
from ..sandbox.socket_folder import short_place
from ..sandbox.worker import exit_description
from .executor import ATTEMPTS, TICK_SECONDS, Job, JobQueue, JobResult, OnResult, OnTick, settle

__all__ = ["ATTEMPTS", "Job", "JobResult", "LocalPool", "default_workers", "run_jobs"]

STOP_GRACE_SECONDS = 10.0  # an interrupted grader process's time to give back what it holds
# what _context() makes; unlike BaseContext, typed with the Process of its start method
_Context: TypeAlias = "multiprocessing.context.ForkContext | multiprocessing.context.ForkServerContext"


def serve(connection: Connection, task: Callable[[Path], Any]) -> None:
    """A worker's life: take a path, send back ("ok", value) or ("failed", reason). A task
    with `look_ahead` is given, before each job, a way to ask for its next job while it
    still works on this one (NextJob): the answer is that job, given to this process, or
    None. On SIGTERM (a batch interrupted) the job under way is unwound, so that its
    student's processes, uid and borrowed ACL entries are given back, and so is what the
    task started ahead (its `close`)."""
    die_with_grader()
    signal.signal(signal.SIGINT, _ignore_interrupt)
    signal.signal(signal.SIGTERM, _stop)
    sys.unraisablehook = _stop_again_if_swallowed
    try:
        _serve(connection, task)
    except Stopped:
        pass
    finally:
        signal.signal(signal.SIGTERM, _ignore_interrupt)  # nothing may interrupt the cleanup,
        signal.setitimer(signal.ITIMER_REAL, 0)  # nor a stop asked again (_stop_again_if_swallowed)
        signal.signal(signal.SIGALRM, _ignore_interrupt)
        close = getattr(task, "close", None)
        if close is not None:
            close()


def _serve(connection: Connection, task: Callable[[Path], Any]) -> None:
    look_ahead = getattr(task, "look_ahead", None)
    path: Path | None = None
    while True:
        if path is None:
            try:
                path = connection.recv()
            except (EOFError, OSError):
                return  # the batch is gone
            if path is None:
                return  # the batch is done (_Worker.finish)
        ahead = NextJob(connection)
        if look_ahead is not None:
            look_ahead(ahead)
        try:
            reply = ("ok", task(path))
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which retries
            reply = ("failed", f"{type(exc).__name__}: {exc}")
        try:
            connection.send(reply)
        except (EOFError, OSError):
            return
        except Exception as exc:  # noqa: BLE001 - a value that can't be pickled
            connection.send(("failed", f"the result could not be sent back: {type(exc).__name__}: {exc}"))
        path = ahead.given


AHEAD = "ahead"  # a worker's question for its next job, sent while it works on one


class NextJob:
    """A grader process's one question per job: its next job, asked while it still works
    on the current one (the parent answers at once: a path, given to this process, or None
    when no job is left to give ahead). Asked and answered in one call, or in two halves
    (`ask` on the grading's thread, which alone sends on the pipe; `answer` on another,
    which alone receives on it until the answer is in): the grading then never waits for
    a batch process busy writing a result. `given` waits for the answer of a question
    asked."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.asked = False
        self._answered = False
        self._given: Path | None = None
        self._lock = threading.Lock()  # one receiver

    def __call__(self) -> Path | None:
        self.ask()
        return self.answer()

    def ask(self) -> None:
        """Send the question (once; not once this grader process is told to stop)."""
        if self.asked or _stopping:
            return
        self.asked = True
        try:
            self.connection.send((AHEAD, None))
        except (EOFError, OSError):
            self._answered = True  # the batch is gone: no answer comes (the next recv says so)

    def answer(self) -> Path | None:
        """The answer to the question asked, waited for (None if none was asked)."""
        with self._lock:
            if self.asked and not self._answered:
                self._given = self._receive()
                self._answered = True
            return self._given

    @property
    def given(self) -> Path | None:
        return self.answer()

    def _receive(self) -> Path | None:
        try:
            while not self.connection.poll(ANSWER_POLL_SECONDS):
                if _stopping:  # interrupted: whatever it was given goes back (_Worker.take_back)
                    return None
            answer = self.connection.recv()
        except (EOFError, OSError):
            return None  # the batch is gone: the next recv says so
        return answer if isinstance(answer, Path) else None


ANSWER_POLL_SECONDS = 0.05  # how soon an answer awaited on a thread sees that its process must stop


class Stopped(BaseException):
    """SIGTERM in a grader process: the batch was interrupted."""


_stopping = False  # this grader process was told to stop: it asks for no further job


def _stop(signum: int, frame: object) -> None:
    global _stopping
    _stopping = True
    signal.signal(signal.SIGTERM, _ignore_interrupt)  # once: the unwinding must not be cut short
    raise Stopped


def _stop_again_if_swallowed(unraisable: Any) -> None:
    """A Stopped that landed where Python can't raise it (a weakref callback, a __del__)
    would be printed as "Exception ignored" and lost, leaving the job running: the stop is
    asked again instead, silently, by a timer's SIGALRM a moment later, once this callback
    is over (a signal raised here would have its handler run at once, still inside it; a
    grader process uses no other alarm)."""
    if isinstance(unraisable.exc_value, Stopped):
        signal.signal(signal.SIGALRM, _stop)
        signal.setitimer(signal.ITIMER_REAL, 0.02)
        return
    sys.__unraisablehook__(unraisable)


def _ignore_interrupt(signum: int, frame: object) -> None:
    """A Python handler, not SIG_IGN: processes the task starts must not inherit an ignored SIGINT."""


class _Worker:
    def __init__(self, context: _Context, task: Callable[[Path], Any]) -> None:
        self.connection, child = context.Pipe()
        self.process = context.Process(target=serve, args=(child, task), name="abgrade-grader", daemon=True)
        self.process.start()
        child.close()
        self.job: Job | None = None
        self.ahead: Job | None = None  # given ahead: its next job, once this one ends
        self.started = 0.0

    def give(self, job: Job) -> None:
        job.attempts += 1
        self.job, self.started = job, time.monotonic()
        try:
            self.connection.send(job.path)
        except OSError:
            pass  # it died while idle: _collect reports the death and the job is retried

    def give_ahead(self, job: Job | None) -> None:
        """Answer the worker's question for its next job (None: none to give)."""
        if job is not None:
            job.attempts += 1
        self.ahead = job
        try:
            self.connection.send(job.path if job is not None else None)
        except OSError:
            pass  # it died: _collect reports the death, and the job given ahead goes back

    def next_job(self) -> None:
        """The job ended: the one given ahead (if any) is under way now."""
        self.job, self.ahead = self.ahead, None
        self.started = time.monotonic()

    def take_back(self) -> Job | None:
        """The job given ahead, never started (the worker died or was stopped first)."""
        job, self.ahead = self.ahead, None
        if job is not None:
            job.attempts -= 1
        return job

    def terminate(self) -> None:
        if self.process.is_alive():
            self.process.terminate()

    def finish(self) -> None:
        """The batch is done with this idle worker: told so (None; not by closing its pipe,
        whose end the grader processes forked later hold too), it returns from its wait,
        closes its task (the last submission's folder and uid, given back on a thread,
        waited for: GradeTask.close) and exits; killed if it doesn't in time."""
        if self.process.is_alive():
            try:
                self.connection.send(None)
            except OSError:
                pass  # it died meanwhile
        self.stop(grace=STOP_GRACE_SECONDS)

    def stop(self, grace: float = 0.0) -> None:
        if grace and self.process.is_alive():
            self.process.join(grace)
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.connection.close()


def default_workers() -> int:
    """The number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@dataclass(frozen=True)
class LocalPool:
    """The executor of this machine: `workers` grader processes (see run_jobs)."""

    workers: int

    @property
    def where(self) -> str:
        return f"{self.workers} worker(s)"

    def run(
        self, jobs: Iterable[Job], task: Callable[[Path], Any], deadline: float, on_result: OnResult, on_tick: OnTick
    ) -> None:
        run_jobs(jobs, task, self.workers, deadline, on_result, on_tick)


def run_jobs(
    jobs: Iterable[Job],
    task: Callable[[Path], Any],
    workers: int,
    deadline: float,
    on_result: OnResult,
    on_tick: OnTick = lambda running: None,
) -> None:
    """Run `task(job.path)` for every job in up to `workers` processes, in order, and call
    `on_result` in this process as each job ends (`jobs` is read as workers get free). A job whose worker dies or whose task
    raises is retried (ATTEMPTS in all); one that runs longer than `deadline` seconds is
    stopped and reported at once (it would only hang again). `on_tick(running)` is called
    while waiting, with how long each running job has run so far. Every worker is stopped
    on return, Ctrl-C included."""
    context = _context()
    queue = JobQueue(jobs)
    pool: list[_Worker] = []
    try:
        while queue or any(w.job for w in pool):
            _dispatch(queue, pool, context, task, workers)
            busy = [w for w in pool if w.job is not None]
            wait([w.connection for w in busy] + [w.process.sentinel for w in busy], timeout=TICK_SECONDS)
            ended = []
            for worker in busy:
                result = _collect(worker, deadline, queue, workers)
                if result is None:
                    continue
                if worker.process.is_alive():
                    worker.next_job()
                else:
                    worker.job = None
                    ahead = worker.take_back()
                    if ahead is not None:
                        queue.give_back(ahead)
                    worker.stop()
                    pool.remove(worker)
                ended.append(result)
            if ended:  # the idle grader processes get their next job first; the gradebook's writes wait
                _dispatch(queue, pool, context, task, workers)
            for result in ended:
                settle(result, queue.retry, on_result)
            now = time.monotonic()
            on_tick([now - w.started for w in pool if w.job is not None])
    except BaseException:
        # interrupted: each grader process unwinds what it has under way (its student's
        # processes and uid, and a kernel started ahead) before it is killed
        for worker in pool:
            worker.terminate()
        for worker in pool:
            worker.stop(grace=STOP_GRACE_SECONDS)
        raise
    finally:
        for worker in pool:  # idle now (or stopped above): each closes its task and exits
            worker.finish()


def _context() -> _Context:
    if threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    _short_multiprocessing_folder()
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["grader.batch.task"])
    return context


def _short_multiprocessing_folder() -> None:
    """The fork server listens on a Unix socket in multiprocessing's temporary folder, which
    Python (before 3.14) makes under TMPDIR: under a long one (a CI runner's work path) the
    socket can't be bound ("AF_UNIX path too long"). So that folder is made, once per
    process, in the short place the kernels' sockets use (sandbox/socket_folder.py), and
    removed at exit as multiprocessing removes its own."""
    config = getattr(multiprocessing.current_process(), "_config", None)
    if not isinstance(config, dict) or config.get("tempdir") is not None:
        return  # made already (the fork server, once started, keeps its address)
    folder = tempfile.mkdtemp(prefix="pymp-", dir=short_place())
    multiprocessing.util.Finalize(None, shutil.rmtree, args=(folder, True), exitpriority=-100)
    config["tempdir"] = folder


def _dispatch(
    queue: JobQueue,
    pool: list[_Worker],
    context: _Context,
    task: Callable[[Path], Any],
    workers: int,
) -> None:
    now = time.monotonic()
    while True:
        worker = next((w for w in pool if w.job is None), None)
        if worker is None and len(pool) >= workers:
            return
        job = queue.take(now)
        if job is None:
            return
        if worker is None:
            worker = _Worker(context, task)
            pool.append(worker)
        worker.give(job)


def _ahead_of(queue: JobQueue, workers: int) -> Job | None:
    """The job to give ahead to a worker that asks (the first that may start now), or None
    when fewer such jobs wait than there are workers: a job given ahead waits for its
    worker's current one, so near the end of the batch, where another worker could soon
    be idle, none is (and nothing is started that no submission needs)."""
    return queue.take_if_waiting(time.monotonic(), max(1, workers))


def _collect(worker: _Worker, deadline: float, queue: JobQueue | None = None, workers: int = 1) -> JobResult | None:
    """The worker's job result if it has one now: a reply, a death, or an expired deadline.
    A question for its next job is answered on the way (from `queue`)."""
    job = worker.job
    assert job is not None
    seconds = time.monotonic() - worker.started
    while worker.connection.poll():
        try:
            status, value = worker.connection.recv()
        except (EOFError, OSError):
            break  # it died without a word: see below
        if status == AHEAD:
            worker.give_ahead(_ahead_of(queue, workers) if queue is not None and worker.ahead is None else None)
            continue
        if status == "ok":
            return JobResult(job, value=value, seconds=seconds)
        return JobResult(job, failure=str(value), seconds=seconds, retryable=True, machine=True)
    if not worker.process.is_alive():
        worker.process.join()
        return JobResult(
            job,
            failure=f"the grader process {exit_description(worker.process.exitcode)} while grading",
            seconds=seconds,
            retryable=True,
        )
    if seconds > deadline:
        worker.process.kill()
        worker.process.join()
        return JobResult(
            job, failure=f"grading took longer than {deadline:g} s; the grader process was stopped", seconds=seconds
        )
    return None
