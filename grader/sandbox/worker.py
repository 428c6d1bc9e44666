"""The `.py` worker: a fresh Python interpreter that runs student code and talks to the
grader over two private pipes. On any expiry its whole process group dies. Its CPU time
(cpu_clock.py) counts against the student's limits from `start_clock()` on: starting and
confining the interpreter is the machine's time."""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..spec.model import Limits
from .cgroup import StudentCgroups
from .channel import FramedChannel, Timeout, WorkerFailure
from .first_spawn import ForkedProcess, Spawned, bootstrap_source
from .identity import StudentIdentity
from .isolation import Isolation
from .output import CappedOutput
from .student_env import scrubbed_env

if TYPE_CHECKING:
    import subprocess  # only where a worker is started its own way, not first_spawn.py's (2.5 ms of imports)

    from .kernel_zygote import KernelZygote, ZygoteKernel  # a batch's: a single grade never forks

BOOTSTRAP_SOURCE = bootstrap_source()  # confine.py, probe_install.py, student_random.py, bootstrap.py
_BOOTSTRAP = BOOTSTRAP_SOURCE + "\nmain()\n"
KILL_GRACE_SECONDS = 0.2


def site_paths() -> list[str]:
    """The worker starts with -S (no .pth processing, ~40 ms faster); it gets these
    instead (the module's SITE_PATHS, worked out when first asked: sysconfig's import)."""
    found = globals().get("SITE_PATHS")
    if found is None:
        import sysconfig

        found = globals()["SITE_PATHS"] = list(
            dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
        )
    return found


def __getattr__(name: str) -> list[str]:
    """SITE_PATHS (site_paths), made when first read (PEP 562)."""
    if name == "SITE_PATHS":
        return site_paths()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Process(Protocol):
    """What the grader asks of a student's first process: a Popen, or a zygote's fork."""

    pid: int

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


def kill_group(pid: int, process: Process | None = None, grace: float = KILL_GRACE_SECONDS) -> None:
    """SIGTERM the process group, SIGKILL it after a short grace, children included. The
    waits end the moment the first process dies (wait_for_exit: its pidfd): a zygote's
    fork is not our child, and its exit status, which only the zygote can read, would
    come a poll of the zygote's later (up to 20 ms on every close of a batch's worker)."""
    if grace > 0:
        try:
            os.killpg(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
        if process is not None:
            wait_for_exit(process, grace)
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if process is not None:
        wait_for_exit(process, 2)


def wait_for_exit(process: Process, seconds: float) -> int | None:
    """The process's exit code once it has ended, waiting at most `seconds` for it: on
    its pidfd where the kernel has them (woken the moment it ends; Popen.wait polls with
    growing sleeps), else with Popen.wait. None: still running."""
    if process.poll() is None:
        try:
            pidfd = os.pidfd_open(process.pid)
        except (AttributeError, OSError):
            pidfd = None
        if pidfd is not None:
            try:
                select.select([pidfd], [], [], seconds)
            finally:
                os.close(pidfd)
        else:
            import subprocess

            try:
                process.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                pass
    return process.poll()


def exit_description(code: int | None) -> str:
    if code is None:
        return "stopped answering"
    if code < 0:
        number = -code
        name = signal.Signals(number).name if number in signal.Signals._value2member_map_ else str(number)
        notes: dict[int, str] = {
            signal.SIGXCPU: " (CPU time limit)",
            signal.SIGKILL: " (killed: memory or time limit?)",
            signal.SIGXFSZ: " (file size limit)",
        }
        extra = notes.get(number, "")
        return f"was killed by {name}{extra}"
    return f"exited with code {code}"


class Worker:
    """One student process. `request()` sends a message and waits for the reply. Started
    as an interpreter of its own (`unshare ... python -I -S -u -c BOOTSTRAP`), or forked by
    the worker zygote (`zygote`, worker_zygote.py), which takes the same steps."""

    def __init__(
        self,
        workdir: Path,
        isolation: Isolation,
        hidden: list[Path],
        identity: StudentIdentity | None = None,
        zygote: KernelZygote | None = None,
    ) -> None:
        self.cgroup = StudentCgroups()
        self.cgroup.set_max(Limits().processes)  # the spec's limits are set before loading
        self.cgroup.set_memory(Limits().memory_mb)
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        out_r, out_w = os.pipe()
        self.started = time.monotonic()
        plan = isolation.plan([workdir], hidden, identity)
        self.forked = False
        self.fork_refused: str | None = None
        self.process: subprocess.Popen | ZygoteKernel | ForkedProcess
        if zygote is not None:
            from .kernel_zygote import ZygoteKernel

            try:
                # the rlimits come with the setup, as for a worker of its own (bootstrap.py)
                fds = [out_w, to_child_r, from_child_w]
                pid = zygote.fork([], plan, scrubbed_env(workdir), fds, {}, self.cgroup.procs_files)
                self.process = ZygoteKernel(zygote, pid)
                self.forked = True
            except OSError as exc:
                self.fork_refused = str(exc)  # the caller says so (worker_zygote.failed); this starts its own
        if not self.forked:
            self.process = self._spawn(isolation, plan, workdir, out_w, to_child_r, from_child_w)
        for fd in (to_child_r, from_child_w, out_w):
            os.close(fd)
        self._attach(to_child_w, from_child_r, out_r)

    @classmethod
    def adopt(cls, spawned: Spawned) -> Worker:
        """The worker first_spawn.py spawned (its process, pipes and cgroups), as if this
        class had started it: the same default limits, before its setup is sent."""
        assert spawned.process is not None
        worker = cls.__new__(cls)
        worker.cgroup = StudentCgroups.adopt(spawned.cgroups)
        worker.cgroup.set_max(Limits().processes)
        worker.cgroup.set_memory(Limits().memory_mb)
        worker.started = spawned.started
        worker.forked, worker.fork_refused = False, None
        worker.process = spawned.process
        to_child_w, from_child_r, out_r = spawned.fds
        worker._attach(to_child_w, from_child_r, out_r)
        spawned.process, spawned.fds, spawned.cgroups = None, [], {}  # the worker's now (before: spawned's)
        return worker

    def _attach(self, to_child_w: int, from_child_r: int, out_r: int) -> None:
        """The grader's side of a started process: its meter, channel and output."""
        self.meter = self.cgroup.meter(self.process.pid)
        self._baseline = 0.0
        self._fds = [to_child_w, from_child_r]
        self.output = CappedOutput(out_r, Limits().output_bytes)  # the spec's cap is set before loading
        self.channel = FramedChannel(from_child_r, to_child_w, self.kill, self._died)
        self.closed = False

    def _spawn(
        self, isolation: Isolation, plan: dict, workdir: Path, out_w: int, to_child_r: int, from_child_w: int
    ) -> subprocess.Popen:
        import subprocess

        from .limits import die_with_grader  # libc loaded here, in the grader, before the fork

        def before_exec() -> None:  # in the child, between fork and exec
            die_with_grader()
            self.cgroup.join()

        return subprocess.Popen(
            [
                *isolation.prefix(),
                sys.executable,
                "-I",
                "-S",
                "-u",
                "-c",
                _BOOTSTRAP,
                str(to_child_r),
                str(from_child_w),
                json.dumps(plan),
            ],
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=out_w,
            cwd=workdir,
            env=scrubbed_env(workdir),
            pass_fds=(to_child_r, from_child_w),
            start_new_session=True,
            preexec_fn=before_exec,
        )

    def request(self, message: dict, timeout: Timeout, ahead: Sequence[dict] = ()) -> dict | WorkerFailure:
        """One case's reply; `ahead`: the requests asked next, sent ahead (channel.py)."""
        return self.channel.request(message, timeout, ahead)

    def start_clock(self) -> None:
        """Count this process tree's CPU time from now on (cpu_used)."""
        self._baseline = self.meter.seconds()

    def cpu_used(self, reading: float | None = None) -> float:
        """CPU seconds the tree used since start_clock(); after kill(), what it had used. `reading`: the meter's, just taken."""
        return (self.meter.seconds() if reading is None else reading) - self._baseline

    def interrupt(self) -> None:
        """SIGINT to the whole process group, as Ctrl-C in a terminal (or a Jupyter
        interrupt): Python code gets a KeyboardInterrupt."""
        try:
            os.killpg(self.process.pid, signal.SIGINT)
        except (ProcessLookupError, PermissionError):
            pass

    @property
    def output_text(self) -> str:
        return self.output.text

    def _died(self, when: str) -> WorkerFailure:
        import subprocess  # its TimeoutExpired: what Popen's and ForkedProcess's wait raise

        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        oom = self.cgroup.out_of_memory()
        self.kill()
        what = "ran out of memory (the memory limit)" if oom else exit_description(code)
        return WorkerFailure("died", f"the student process {what}{(' ' + when) if when else ''}", code)

    def kill(self) -> None:
        """Terminate the whole process group now."""
        if self.closed:
            return
        self.closed = True
        self.meter.seconds()  # the last reading is kept: the cgroup goes below
        kill_group(self.process.pid, self.process)
        self.meter.seconds()
        self.meter.close()
        self.cgroup.remove()
        self._close_fds()
        self.output.finish()

    def _close_fds(self) -> None:
        fds, self._fds = self._fds, []
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass

    def close(self) -> None:
        """End a healthy worker: close its input so it exits on its own (flushing what it
        printed), then make sure nothing of its group is left."""
        if self.closed:
            return
        if self._fds:
            os.close(self._fds.pop(0))
        wait_for_exit(self.process, KILL_GRACE_SECONDS)
        self.kill()
