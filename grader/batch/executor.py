"""What the batch runner asks of whatever grades its submissions: the local process pool
(pool.py) or a Dask cluster (dask_pool.py). Both take the same jobs and the same task, retry
the same way (ATTEMPTS, with a growing delay), and hand each job's final result to the
runner in the batch process, which alone writes the gradebook; so runner.py never asks
which one it has."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

ATTEMPTS = 3  # a job whose worker dies or whose task raises is tried this often
RETRY_DELAY_SECONDS = 1.0  # per attempt already made: a machine that can't start a kernel gets a breather
TICK_SECONDS = 0.25  # how often the caller's on_tick runs (progress bar) while waiting


@dataclass
class Job:
    key: str
    path: Path
    attempts: int = 0
    not_before: float = 0.0


@dataclass
class JobResult:
    """A finished job: the task's return value, or why there is none (after the last attempt)."""

    job: Job
    value: Any = None
    failure: str | None = None
    seconds: float = 0.0
    retryable: bool = False  # the worker died or the task raised: another attempt may succeed
    machine: bool = False  # the task raised (a machine problem), as opposed to a death or an expired deadline


OnResult = Callable[[JobResult], None]
OnTick = Callable[[list[float]], None]


class Executor(Protocol):
    """Runs `task(job.path)` for every job and calls `on_result` in this process, once per
    job, when the job is finally done (a retried attempt is not reported); `on_tick(running)`
    while waiting, with how long each running job has run. Stops everything it started on
    return, Ctrl-C included."""

    @property
    def workers(self) -> int:
        """How many submissions it grades at once (for messages and the runs table)."""
        ...

    @property
    def where(self) -> str:
        """Where the grading happens, for the batch's first line."""
        ...

    def run(
        self, jobs: Iterable[Job], task: Callable[[Path], Any], deadline: float, on_result: OnResult, on_tick: OnTick
    ) -> None: ...


class JobQueue:
    """The jobs still to hand out, in order: the caller's, read from its iterable only as
    they are handed out (a class of any size is never a list here; a look ahead reads at
    most as many as there are workers), then the retries, each once its delay is over."""

    def __init__(self, jobs: Iterable[Job]) -> None:
        self._fresh = iter(jobs)
        self._front: deque[Job] = deque()  # read from the iterable already, or given back
        self._retries: deque[Job] = deque()

    def __bool__(self) -> bool:
        return self._read(1) or bool(self._retries)

    def _read(self, count: int) -> bool:
        """Read jobs from the iterable until `count` wait in front (or it is done)."""
        while len(self._front) < count and (job := next(self._fresh, None)) is not None:
            self._front.append(job)
        return bool(self._front)

    def take(self, now: float) -> Job | None:
        """The next job that may start at `now`, or None."""
        self._read(1)
        for waiting in (self._front, self._retries):
            for job in waiting:
                if job.not_before <= now:
                    waiting.remove(job)
                    return job
        return None

    def take_if_waiting(self, now: float, count: int) -> Job | None:
        """The next job that may start at `now` if at least `count` such jobs wait, else
        None (counted over at most `count` jobs read ahead, never the whole class)."""
        self._read(count)
        ready = [job for job in (*self._front, *self._retries) if job.not_before <= now][:count]
        return self.take(now) if len(ready) >= count else None

    def give_back(self, job: Job) -> None:
        """A job handed out and never tried (its worker died first): next in line again."""
        self._front.appendleft(job)

    def retry(self, job: Job) -> None:
        self._retries.append(job)


def settle(result: JobResult, requeue: Callable[[Job], None], on_result: OnResult) -> None:
    """A job's attempt ended: try it again later when it may still succeed, else report it."""
    if result.retryable and result.job.attempts < ATTEMPTS:
        result.job.not_before = time.monotonic() + RETRY_DELAY_SECONDS * result.job.attempts
        requeue(result.job)
    else:
        on_result(result)
