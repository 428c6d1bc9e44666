"""One batch at a time per gradebook. Two runs writing one gradebook at once would grade
students twice, possibly with two seeds (two different sets of hidden cases), and both
would claim success; so a run holds an exclusive `flock` on `OUT/gradebook.lock` from
before it opens the gradebook until it ends. The kernel drops the lock when the holder
dies, however it dies, so a killed run never leaves a stale lock behind."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..lab_setup import UsageError

LOCK_NAME = "gradebook.lock"
WAIT_SECONDS = 3.0  # a run that is just ending gets this long before the next one gives up


class GradebookBusy(UsageError):
    """Another live batch holds the gradebook's lock (exit code 2, nothing was done)."""


@contextmanager
def gradebook_lock(out: Path, wait: float = WAIT_SECONDS) -> Iterator[Path]:
    """Hold the lock of the gradebook in `out` (waiting up to `wait` seconds for it);
    raises GradebookBusy naming the lock file and the holder's pid."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
                    raise GradebookBusy(
                        f"{path}: another abgrade batch (pid {holder}) is grading into this "
                        "folder; wait until it ends (or stop it), then run again"
                    ) from None
                time.sleep(0.1)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield path
    finally:
        os.close(fd)  # releases the lock
