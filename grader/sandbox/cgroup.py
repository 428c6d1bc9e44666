"""Caps that also hold for root and count resident memory: one cgroup per student process
tree, with the `pids` controller (processes and threads; RLIMIT_NPROC does nothing for
root, and a PID namespace has no size of its own), the `memory` controller (resident
memory, so a Jupyter kernel that maps a lot of address space but uses little still
starts: RLIMIT_AS, the fallback, fails kernels below about 700 MB) and CPU accounting
(the tree's CPU time, on which its time limits are charged: cpu_clock.py). cgroup v1 (one
hierarchy per controller; `cpuacct`) and v2 (one unified hierarchy, where every cgroup has
`cpu.stat`) alike, where the grader may make cgroups. The student can't leave it: it runs
as another uid, and the cgroup file system is read-only in its mount namespace."""

from __future__ import annotations

import os
import time
from functools import partial
from pathlib import Path

from .cpu_clock import CgroupCpu, CpuMeter, ProcessTreeCpu
from .identity import kill_until_gone

_ROOT = Path("/sys/fs/cgroup")
STALE_SECONDS = 600
# (v1 controller, the file that shows a cgroup of it works); v2 names some files otherwise
CONTROLLERS = (("pids", "pids.max"), ("memory", "memory.limit_in_bytes"), ("cpuacct", "cpuacct.usage"))
V2_FILES = {"memory": "memory.max", "cpuacct": "cpu.stat"}


def _controller_root(controller: str) -> Path | None:
    """Where cgroups with `controller` can be made: the v1 hierarchy of that name, or
    the v2 root when the controller is enabled for its children (CPU accounting needs
    none there: `cpu.stat` is in every v2 cgroup)."""
    v1 = _ROOT / controller
    if (v1 / "cgroup.procs").exists() and os.access(v1, os.W_OK):
        return v1
    subtree = _ROOT / "cgroup.subtree_control"
    if subtree.exists() and os.access(_ROOT, os.W_OK):
        try:
            if controller == "cpuacct" or controller in subtree.read_text().split():
                return _ROOT
        except OSError:
            return None
    return None


def _members(path: Path) -> list[int]:
    try:
        return [int(p) for p in (path / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


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


def sweep_stale() -> None:
    """Remove stale cgroups (_sweep) in every hierarchy: what StudentCgroups() does when it
    makes its own, for the cgroups first_spawn.py made (a grade's cleanup thread calls it)."""
    for root in dict.fromkeys(_controller_root(controller) for controller, _ in CONTROLLERS):
        if root is not None:
            _sweep(root)


class StudentCgroups:
    """The cgroups (one per hierarchy) of one student process tree. `join()` runs in the
    child between fork and exec, so the process is counted from its first instruction."""

    def __init__(self) -> None:
        name = f"abgrade-{os.urandom(6).hex()}"
        self.paths: dict[str, Path] = {}
        for controller, limit_file in CONTROLLERS:
            root = _controller_root(controller)
            if root is None:
                continue
            if root == _ROOT:
                limit_file = V2_FILES.get(controller, limit_file)
            path = root / name
            if path in self.paths.values():
                self.paths[controller] = path
                continue
            _sweep(root)
            try:
                path.mkdir()
            except OSError:
                continue
            if (path / limit_file).exists():
                self.paths[controller] = path
            else:
                path.rmdir()
        self._procs = [os.fsencode(p / "cgroup.procs") for p in dict.fromkeys(self.paths.values())]

    @classmethod
    def adopt(cls, paths: dict[str, str]) -> StudentCgroups:
        """The cgroups first_spawn.py made (controller -> folder) for the worker it spawned
        (the sweep of stale ones that making them here does: `sweep_stale`, after the grade)."""
        made = cls.__new__(cls)
        made.paths = {controller: Path(path) for controller, path in paths.items()}
        made._procs = [os.fsencode(p / "cgroup.procs") for p in dict.fromkeys(made.paths.values())]
        return made

    @property
    def procs_files(self) -> list[bytes]:
        """The `cgroup.procs` files a process writes its pid to, to join (see join())."""
        return list(self._procs)

    @property
    def limits_memory(self) -> bool:
        return "memory" in self.paths

    @property
    def cpu_file(self) -> Path | None:
        """The file that holds the tree's CPU time (cpu_clock.CgroupCpu), if there is one."""
        path = self.paths.get("cpuacct")
        if path is None:
            return None
        return path / ("cpu.stat" if path.parent == _ROOT else "cpuacct.usage")

    def meter(self, root_pid: int) -> CpuMeter:
        """What measures the tree's CPU time: this cgroup's accounting, or (without one)
        the processes under `root_pid` (cpu_clock.py)."""
        path = self.cpu_file
        return CgroupCpu(path) if path is not None else ProcessTreeCpu(root_pid)

    def _write(self, controller: str, names: tuple[str, ...], value: str) -> None:
        path = self.paths.get(controller)
        if path is None:
            return
        for name in names:
            try:
                (path / name).write_text(value)
            except OSError:
                pass

    def set_max(self, count: int) -> None:
        """At most `count` processes and threads."""
        self._write("pids", ("pids.max",), str(count))

    def set_memory(self, mib: int) -> None:
        """At most `mib` MiB of resident memory (and swap, where it is accounted)."""
        value = str(mib * 1024 * 1024)
        self._write("memory", ("memory.limit_in_bytes", "memory.max"), value)
        self._write("memory", ("memory.memsw.limit_in_bytes",), value)  # v1 with swap accounting
        self._write("memory", ("memory.swap.max",), "0")  # v2

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of this cgroup for exceeding the memory cap."""
        path = self.paths.get("memory")
        if path is None:
            return False
        for name in ("memory.events", "memory.oom_control"):
            try:
                for line in (path / name).read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill" and value.strip() not in ("", "0"):
                        return True
            except OSError:
                continue
        try:
            return int((path / "memory.failcnt").read_text()) > 0 and not self._alive()
        except (OSError, ValueError):
            return False

    def _alive(self) -> bool:
        try:
            return bool((next(iter(self.paths.values())) / "cgroup.procs").read_text().split())
        except (OSError, StopIteration):
            return False

    def join(self) -> None:
        """Move the calling process into every cgroup (between fork and exec)."""
        pid = str(os.getpid()).encode()
        for procs in self._procs:
            fd = os.open(procs, os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)

    def kill_all(self) -> None:
        """SIGKILL every process still in the cgroups, also those that left the process
        group with setsid; wait (up to 2 s) until they are empty."""
        for path in dict.fromkeys(self.paths.values()):
            kill_until_gone(partial(_members, path))

    def remove(self) -> None:
        """Kill what is left and remove the cgroups."""
        self.kill_all()
        for path in dict.fromkeys(self.paths.values()):
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except OSError:
                    time.sleep(0.01)
        self.paths = {}
        self._procs = []
