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


class CgroupCpu:
    """The CPU time the kernel charged to one cgroup: v1 `cpuacct.usage` (nanoseconds) or
    v2 `cpu.stat` (`usage_usec`). The last reading is kept, so that a cgroup removed after
    its processes were killed still reads what they used."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._last = 0.0

    def seconds(self) -> float:
        try:
            text = self.path.read_text()
        except OSError:
            return self._last
        if self.path.name == "cpu.stat":
            usage = next((line.split()[1] for line in text.splitlines() if line.startswith("usage_usec ")), None)
            value = int(usage) / 1e6 if usage is not None else self._last
        else:
            value = int(text) / 1e9
        self._last = max(self._last, value)
        return self._last


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


class NotStarted:
    """The meter of a tree that has not started yet: nothing used."""

    def seconds(self) -> float:
        return 0.0
