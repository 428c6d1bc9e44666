"""Progress of a batch on stderr: on a terminal, a bar redrawn in place; elsewhere (logs,
CI, a test's pipe) one line per finished submission. Both show an ETA."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TextIO

BAR_WIDTH = 30


def eta_seconds(
    done: int, total: int, elapsed: float, running: Sequence[float] = (), mean: float = 0.0, limit: float | None = None
) -> float | None:
    """Time left; None before the first result. The jobs not started yet take the
    throughput so far (all workers together); and the run can't end before its running
    jobs do (`running`: how long each has run). A running job younger than the `mean`
    finished job is expected to take the mean; an older one, as long again as it has
    taken so far, within its `limit`. So one long job at the end shows its time, not 0:00."""
    if done <= 0 or elapsed <= 0:
        return None
    waiting = max(0, total - done - len(running))
    left = elapsed / done * waiting
    for age in running:
        if age < mean:
            left = max(left, mean - age)
        else:
            left = max(left, min(age, limit - age) if limit is not None else age)
    return max(0.0, left)


def clock(seconds: float | None) -> str:
    """`m:ss` or `h:mm:ss`; `?` when unknown."""
    if seconds is None:
        return "?"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def bar(done: int, total: int, width: int = BAR_WIDTH) -> str:
    filled = width if total <= 0 else width * done // total
    return "#" * filled + "-" * (width - filled)


class Progress:
    def __init__(self, total: int, stream: TextIO, live: bool, limit: float | None = None) -> None:
        self.total, self.stream, self.live, self.limit = total, stream, live, limit
        self.done = 0
        self.running: list[float] = []  # how long each running job has run, at the last tick
        self.job_seconds = 0.0
        self.started = time.monotonic()

    def _timing(self) -> str:
        elapsed = time.monotonic() - self.started
        mean = self.job_seconds / self.done if self.done else 0.0
        eta = eta_seconds(self.done, self.total, elapsed, self.running, mean, self.limit)
        return f"{clock(elapsed)} elapsed, ETA {clock(eta)}"

    def finished(self, student: str, outcome: str, seconds: float = 0.0) -> None:
        """One submission is done: `outcome` is its score (`17/21`) or `error: ...`."""
        self.done += 1
        self.job_seconds += seconds
        if self.running:
            self.running.remove(min(self.running, key=lambda age: abs(age - seconds)))  # the next tick says exactly
        if self.live:
            self.tick(self.running)
        else:
            print(f"[{self.done}/{self.total}] {student}: {outcome}  ({self._timing()})", file=self.stream, flush=True)

    def tick(self, running: Sequence[float]) -> None:
        """Redraw the bar (on a terminal), e.g. while waiting, so that the clock moves."""
        self.running = list(running)
        if self.live:
            percent = 100 * self.done // self.total if self.total else 100
            print(
                f"\r\033[K{self.done}/{self.total} [{bar(self.done, self.total)}] {percent:3d}%  "
                f"{len(self.running)} running  {self._timing()}",
                end="",
                file=self.stream,
                flush=True,
            )

    def close(self) -> None:
        if self.live:
            print(file=self.stream, flush=True)
