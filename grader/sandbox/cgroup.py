"""A process-count limit that also holds for root: a cgroup (v1 `pids` controller, or
cgroup v2 with `pids` enabled) per student process tree, where the machine lets the
grader make one. RLIMIT_NPROC alone does nothing for root, and a PID namespace has no
size of its own. Where no cgroup can be made, RLIMIT_NPROC is all there is (stated in
README's threat model)."""
from __future__ import annotations

import os
import secrets
import signal
import time
from pathlib import Path

_CANDIDATES = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))


def _pids_root() -> Path | None:
    for root in _CANDIDATES:
        if (root / "cgroup.procs").exists() and os.access(root, os.W_OK):
            controllers = root / "cgroup.controllers"  # v2: pids must be available
            if root.name == "pids" or (controllers.exists() and "pids" in controllers.read_text().split()):
                return root
    return None


STALE_SECONDS = 600


def _sweep(root: Path) -> None:
    """Remove cgroups left by graders that were killed (SIGKILL can't clean up): only old
    ones, and rmdir refuses any that still holds a process."""
    now = time.time()
    for old in root.glob("abgrade-*"):
        try:
            if now - old.stat().st_mtime > STALE_SECONDS:
                old.rmdir()
        except OSError:
            pass


class PidsCgroup:
    """One cgroup with a `pids.max`; `join()` runs in the child (preexec_fn) so that the
    student process and everything it starts are counted from the first instruction."""

    def __init__(self) -> None:
        self.path: Path | None = None
        root = _pids_root()
        if root is None:
            return
        _sweep(root)
        path = root / f"abgrade-{secrets.token_hex(6)}"
        try:
            path.mkdir()
        except OSError:
            return
        if (path / "pids.max").exists():
            self.path = path
            self._procs = os.fsencode(path / "cgroup.procs")
        else:
            path.rmdir()

    def set_max(self, count: int) -> None:
        if self.path is not None:
            try:
                (self.path / "pids.max").write_text(str(count))
            except OSError:
                pass

    def join(self) -> None:
        """Move the calling process into the cgroup (between fork and exec)."""
        if self.path is not None:
            fd = os.open(self._procs, os.O_WRONLY)
            try:
                os.write(fd, str(os.getpid()).encode())
            finally:
                os.close(fd)

    def kill_all(self) -> None:
        """SIGKILL every process still in the cgroup, also those that left the process
        group with setsid; wait (up to 2 s) until it is empty."""
        if self.path is None:
            return
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            try:
                pids = [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
            except (OSError, ValueError):
                break
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.01)

    def remove(self) -> None:
        """Kill what is left and remove the cgroup."""
        if self.path is None:
            return
        self.kill_all()
        try:
            self.path.rmdir()
        except OSError:
            pass
        self.path = None
