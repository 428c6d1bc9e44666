"""Progress of a batch on stderr: on a terminal, a bar redrawn in place; elsewhere (logs,
CI, a test's pipe) one line per finished submission. Both show an ETA."""
from __future__ import annotations

import time
from typing import TextIO

BAR_WIDTH = 30


def eta_seconds(done: int, total: int, elapsed: float) -> float | None:
    """Time left at the throughput so far (all workers together); None before the first result."""
    if done <= 0 or elapsed <= 0:
        return None
    return elapsed / done * (total - done)


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
    def __init__(self, total: int, stream: TextIO, live: bool) -> None:
        self.total, self.stream, self.live = total, stream, live
        self.done = 0
        self.running = 0
        self.started = time.monotonic()

    def _timing(self) -> str:
        elapsed = time.monotonic() - self.started
        return f"{clock(elapsed)} elapsed, ETA {clock(eta_seconds(self.done, self.total, elapsed))}"

    def finished(self, student: str, outcome: str) -> None:
        """One submission is done: `outcome` is its score (`17/21`) or `error: ...`."""
        self.done += 1
        if self.live:
            self.tick(self.running)
        else:
            print(f"[{self.done}/{self.total}] {student}: {outcome}  ({self._timing()})", file=self.stream, flush=True)

    def tick(self, running: int) -> None:
        """Redraw the bar (on a terminal), e.g. while waiting, so that the clock moves."""
        self.running = running
        if self.live:
            percent = 100 * self.done // self.total if self.total else 100
            print(f"\r\033[K{self.done}/{self.total} [{bar(self.done, self.total)}] {percent:3d}%  "
                  f"{running} running  {self._timing()}", end="", file=self.stream, flush=True)

    def close(self) -> None:
        if self.live:
            print(file=self.stream, flush=True)
