"""The CPU time a student process tree has used: what its time limits are charged on
(DESIGN.md, "Running submissions"), so that a busy machine never changes a verdict. A
process that waits for its turn on a loaded CPU uses no CPU time meanwhile.

Where the grader made a CPU-accounting cgroup for the tree (cgroup.py: v1 `cpuacct`, v2
`cpu.stat`), the kernel counts every process and thread of it, those that already ended
included, and the student can't leave it. Elsewhere (a grader that may not make cgroups:
not root, most CI runners) the tree is read from /proc: the user and system time of every
live process under the root pid, plus what each has collected from its ended children
(`cutime`, `cstime`). What that misses (an orphan's time after its parent ended without
waiting for it: it is reparented outside the tree) is still bounded by the per-process
RLIMIT_CPU and the wall-clock backstop. RUSAGE_CHILDREN can't stand in: it counts a child
only once it has been waited for, and sums every child of the grader, other gradings' too.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Protocol

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
# fields of /proc/PID/stat after the command's closing parenthesis (field 3 is index 0)
_PPID, _UTIME, _CSTIME = 1, 11, 14
# /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN); without it the whole of /proc is scanned
_HAVE_CHILDREN_FILES = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists()


class CpuMeter(Protocol):
    """CPU seconds used so far by one student process tree; never decreases."""

    def seconds(self) -> float: ...

    def close(self) -> None:
        """Let go of what the meter holds; seconds() then repeats its last reading."""


# one read of a cgroup accounting file: cpu.stat is a few hundred bytes, cpuacct.usage one number
_READ_BYTES = 4096


def _stat_usage_usec(data: bytes) -> int | None:
    """The `usage_usec` line's value in a v2 `cpu.stat` (its first line in every kernel)."""
    for line in data.splitlines():
        if line.startswith(b"usage_usec "):
            return int(line.split()[1])
    return None


class CgroupCpu:
    """The CPU time the kernel charged to one cgroup: v1 `cpuacct.usage` (nanoseconds) or
    v2 `cpu.stat` (`usage_usec`). The last reading is kept, so that a cgroup removed after
    its processes were killed still reads what they used. The file is opened once and
    read with pread (a grade reads it a few hundred times: an open and a read each cost
    about 15 times a pread), and closed with the session (close())."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._last = 0.0
        self._fd: int | None = None
        self._closed = False
        self._stat = path.name == "cpu.stat"
        self._lock = threading.Lock()  # a deadline's thread reads while the session closes

    def _read(self) -> bytes | None:
        with self._lock:
            if self._closed:
                return None
            try:
                if self._fd is None:
                    self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
                return os.pread(self._fd, _READ_BYTES, 0)
            except OSError:  # the cgroup is gone: its last reading stands
                return None

    def seconds(self) -> float:
        data = self._read()
        if data is None:
            return self._last
        if self._stat:
            usage = _stat_usage_usec(data)
            if usage is None:
                return self._last
            value = usage / 1e6
        else:
            value = int(data) / 1e9
        self._last = max(self._last, value)
        return self._last

    def close(self) -> None:
        """Close the kept descriptor (the cgroup can go); seconds() returns the last reading."""
        with self._lock:
            self._closed = True
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rpartition(")")[2].split()


def _children(pid: int) -> list[int]:
    """The pids whose parent is `pid`, from each of its threads' `children` file."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for tid in threads:
        try:
            found += [int(p) for p in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
        except (OSError, ValueError):
            continue
    return found


def _all_parents() -> dict[int, list[int]]:
    """Every process's children, by a scan of /proc (kernels without `children` files)."""
    tree: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _stat_fields(int(name))
            if fields is not None and len(fields) > _PPID:
                tree.setdefault(int(fields[_PPID]), []).append(int(name))
    return tree


class ProcessTreeCpu:
    """The fallback without a cgroup: user + system time of the live processes under `root`
    (itself included), with the time of the children they have waited for."""

    def __init__(self, root: int) -> None:
        self.root = root
        self._last = 0.0

    def seconds(self) -> float:
        ticks = 0
        scanned: dict[int, list[int]] | None = None
        todo, seen = [self.root], set()
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            fields = _stat_fields(pid)
            if fields is None or len(fields) <= _CSTIME:
                continue
            ticks += sum(int(v) for v in fields[_UTIME : _CSTIME + 1])
            if _HAVE_CHILDREN_FILES:
                todo += _children(pid)
            else:
                scanned = scanned if scanned is not None else _all_parents()
                todo += scanned.get(pid, [])
        self._last = max(self._last, ticks / _TICKS)
        return self._last

    def close(self) -> None:
        """Nothing is held between readings."""


class NotStarted:
    """The meter of a tree that has not started yet: nothing used."""

    def seconds(self) -> float:
        return 0.0

    def close(self) -> None:
        """Nothing is held."""
