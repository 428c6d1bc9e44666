"""A cheaper fresh kernel (issue 19, part 2): a "zygote" process per grader process
imports ipykernel, IPython, zmq and tornado once (about half of a kernel's start-up CPU,
see bench/bench_kernel_phases.py) and forks a fresh, never-used kernel per notebook. Each
fork joins its cgroups, takes its rlimits, makes its own namespaces (unshare(2) and a
fork for the PID namespace), confines itself with confine.py (mounts, capability bounding
set, the leased uid, no_new_privs, seccomp) before any student code, then starts the
kernel app on the connection file it was given (zygote_process.py). Never two students
in one kernel, never a kernel used twice: a kernel is a fork that runs one notebook.

The zygote runs as the grader's user, outside every sandbox; its control channel is a
socketpair inherited only by it (closed in every fork), never a path. It dies with the
grader. It never reads a request: each travels on a socket of its own that only the fork
reads, so the zygote's memory, which every fork inherits, holds no path, environment or
buffer of an earlier grading (tests/test_kernel_zygote.py scans a fork's memory). Used only when the grader is root (each kernel leases a uid; a grader that is
not root keeps today's `unshare --user` path) and ABGRADE_KERNEL_ZYGOTE is not "0". If
the zygote can't start (a missing module, ...) or dies, kernels start as before, one
interpreter each (`isolation.wrap`), and `note()` says why."""

from __future__ import annotations

import functools
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .isolation import CONFINE_SOURCE, Isolation
from .limits import die_with_grader
from .student_env import scrubbed_env

_SOURCE = CONFINE_SOURCE + "\n" + (Path(__file__).parent / "zygote_process.py").read_text()
START_SECONDS = 30.0  # importing ipykernel on a busy machine
SPAWN_SECONDS = 10.0
LOG = logging.getLogger("abgrade.zygote")


def enabled() -> bool:
    return os.environ.get("ABGRADE_KERNEL_ZYGOTE", "1") != "0"


class ZygoteKernel:
    """What jupyter_client's LocalProvisioner needs of a Popen, for a kernel forked by the
    zygote (a child of the zygote, not of the grader: its exit status comes from the zygote)."""

    stdin = stdout = stderr = None

    def __init__(self, zygote: KernelZygote, pid: int) -> None:
        self.zygote, self.pid = zygote, pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.exit_status(self.pid)
        if self.returncode is None and self.zygote.ended():
            # no exit status will ever come, and a fork dies with its zygote (PR_SET_PDEATHSIG):
            # without this the kernel looked alive forever, and a grading waited on it for good
            self.returncode = -signal.SIGKILL
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"kernel {self.pid}", timeout or 0)
            self.zygote.wait_for_exit(0.05)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(9)

    def terminate(self) -> None:
        self.send_signal(15)


class KernelZygote:
    """The zygote process and its private control channel. Thread-safe. `command(fd)`: how
    to start it, given its end of the control socket (default: the kernel zygote's;
    worker_zygote.py starts `.py` workers' zygote with it). `door`: no process of its own,
    but a channel of the zygote a server holds, sent through that zygote's door
    (grader/serve/zygotes.py): a served grade's, closed with it."""

    def __init__(self, command: Callable[[int], list[str]] | None = None, *, door: socket.socket | None = None) -> None:
        self.command = command
        self.owner = os.getpid()
        self.ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.ours.set_inheritable(False)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._replies: dict[int, dict] = {}
        self._exits: dict[int, int] = {}
        self._next_id = 0
        self.alive = False
        self._ended = False  # its control socket reached its end (after the last message)
        self.pid = 0
        self.problem: str | None = None
        self.process: subprocess.Popen | None = None
        started = threading.Event()
        # started from a thread that lives as long as the zygote: PR_SET_PDEATHSIG fires
        # when the thread that forked a process ends, not only the process
        run = self._run if door is None else functools.partial(self._enter, door)
        threading.Thread(target=run, args=(theirs, started), name="abgrade-kernel-zygote", daemon=True).start()
        started.wait()
        with self._lock:
            self._changed.wait_for(lambda: self.alive or self.problem is not None, timeout=START_SECONDS)
            if not self.alive and self.problem is None:
                self.problem = f"it did not start within {START_SECONDS:g} s"
        if self.problem:
            self.close()

    def _run(self, theirs: socket.socket, started: threading.Event) -> None:
        try:
            command = self.command or (lambda fd: [sys.executable, "-c", _SOURCE + f"\nmain({fd})\n"])
            self.process = subprocess.Popen(
                command(theirs.fileno()),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                cwd="/",
                env=scrubbed_env(Path("/nonexistent")),  # as a kernel's (PYTHONHASHSEED, no bytecode)
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
                preexec_fn=die_with_grader,
            )
        except OSError as exc:
            self._give_up(f"{type(exc).__name__}: {exc}", started)
            return
        finally:
            theirs.close()
        started.set()
        self._read()

    def _enter(self, door: socket.socket, theirs: socket.socket, started: threading.Event) -> None:
        """A channel of a server's zygote: our socket's other end, sent through its door."""
        try:
            socket.send_fds(door, [b"channel"], [theirs.fileno()])
        except OSError as exc:
            self._give_up(f"its door is closed ({type(exc).__name__}: {exc})", started)
            return
        finally:
            theirs.close()
        started.set()
        self._read()

    def _give_up(self, problem: str, started: threading.Event) -> None:
        """No zygote to talk to: say why to whoever waits, and let the start go on."""
        with self._lock:
            self.problem = problem
            self._changed.notify_all()
        started.set()

    def _read(self) -> None:
        """Take the zygote's messages until its end of the channel closes."""
        buffer = b""
        while True:
            try:
                data = self.ours.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            buffer += data
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                self._take(json.loads(line))
        with self._lock:
            if self.alive or self.problem is None:
                said = ""
                if self.process is not None and self.process.stderr is not None:
                    try:
                        said = self.process.stderr.read(2000).decode(errors="replace").strip()
                    except (OSError, ValueError):
                        pass
                self.problem = self.problem or f"it ended{': ' + said.splitlines()[-1] if said else ''}"
            self.alive = False
            self._ended = True
            self._changed.notify_all()

    def _take(self, message: dict) -> None:
        with self._lock:
            if "exit" in message:
                self._exits[int(message["exit"])] = int(message["status"])
            elif "ready" in message:
                self.pid, self.alive = int(message["ready"]), True
            elif "id" in message:
                self._replies[int(message["id"])] = message
            elif "error" in message:
                self.problem = f"it could not import the kernel: {message['error']}"
            self._changed.notify_all()

    def spawn(self, args: list[str], plan: dict, env: dict[str, str], out_fd: int, caps: dict, cgroups: list) -> int:
        """Fork a fresh kernel confined by `plan`; its pid. Raises OSError when the zygote
        can't (the caller then starts the kernel the usual way)."""
        return self.fork(args, plan, env, [out_fd], caps, cgroups)

    def fork(self, args: list[str], plan: dict, env: dict[str, str], fds: list[int], caps: dict, cgroups: list) -> int:
        """Fork a fresh child confined by `plan`, handing it `fds` (its output pipe first,
        then, for a worker, its channel's two pipes); its pid. OSError when the zygote can't."""
        request: dict[str, Any] = {
            "args": args,
            "plan": plan,
            "env": env,
            "rlimits": caps,
            "cgroups": [os.fsdecode(p) for p in cgroups],
        }
        # the request travels on a socket of its own that only the fork reads: the zygote's
        # memory, which every later fork inherits, never holds a grading's paths or environment
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            mine.settimeout(SPAWN_SECONDS)
            mine.sendall(json.dumps(request).encode())  # queued in the socket until the fork reads it
            mine.close()
            with self._lock:
                if not self.alive:
                    raise OSError(f"the kernel zygote is gone ({self.problem})")
                self._next_id += 1
                number = self._next_id
                line = json.dumps({"id": number}).encode() + b"\n"
                socket.send_fds(self.ours, [line], [fds[0], theirs.fileno(), *fds[1:]])
                theirs.close()
                if not self._changed.wait_for(lambda: number in self._replies or not self.alive, timeout=SPAWN_SECONDS):
                    raise OSError("the kernel zygote did not answer")
                reply = self._replies.pop(number, None)
        finally:
            mine.close()
            theirs.close()
        if reply is None or "pid" not in reply:
            raise OSError(f"the kernel zygote could not fork: {(reply or {}).get('error', self.problem)}")
        return int(reply["pid"])

    def exit_status(self, pid: int) -> int | None:
        with self._lock:
            return self._exits.get(pid)

    def ended(self) -> bool:
        """The zygote is gone and every exit status it sent has been taken."""
        with self._lock:
            return self._ended

    def wait_for_exit(self, seconds: float) -> None:
        with self._lock:
            self._changed.wait(seconds)

    def close(self) -> None:
        self.alive = False
        try:
            self.ours.close()
        except OSError:
            pass
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


_ZYGOTE: KernelZygote | None = None
_START_LOCK = threading.Lock()
_NOTE: str | None = None


def note() -> str | None:
    """Why kernels start without the zygote in this grader process, if they do."""
    return _NOTE


def zygote_for(isolation: Isolation, uid: int | None) -> KernelZygote | None:
    """This grader process's zygote (started on first use), or None when kernels must
    start the usual way: turned off, no leased uid, or the zygote can't run here."""
    global _ZYGOTE, _NOTE
    if not enabled() or uid is None or isolation.userns:
        return None
    with _START_LOCK:
        if _ZYGOTE is not None and _ZYGOTE.owner != os.getpid():  # a forked grader: not ours
            _ZYGOTE = None
        if _ZYGOTE is None or not _ZYGOTE.alive:
            if _ZYGOTE is not None:
                _NOTE = f"kernel zygote: {_ZYGOTE.problem}; restarted"
                LOG.warning(_NOTE)
            zygote = KernelZygote()
            if not zygote.alive:
                _NOTE = f"kernel zygote unavailable ({zygote.problem}): one interpreter per kernel"
                LOG.warning(_NOTE)
                _ZYGOTE = None
                return None
            _ZYGOTE = zygote
        return _ZYGOTE


def adopt(km: Any, isolation: Isolation, uid: int | None, plan: dict, caps: dict, cgroups: list) -> None:
    """Make the kernel manager `km` (whose kernel spec runs `isolation.wrap(argv, plan)`)
    start its kernel as a fork of the zygote, confined by `plan` with `caps` and in
    `cgroups`; when there is no zygote, or it fails, the wrapped command runs as before."""
    launch = km._async_launch_kernel
    skip = len(isolation.wrap([], plan))  # the wrapper in front of the kernel's own argv

    async def launch_from_zygote(kernel_cmd: list[str], **kw: Any) -> None:
        global _NOTE
        zygote = zygote_for(isolation, uid)
        inner = kernel_cmd[skip:]
        if zygote is None or inner[:3] != [sys.executable, "-m", "ipykernel_launcher"]:
            return await launch(kernel_cmd, **kw)
        provisioner = km.provisioner
        try:
            # as jupyter_client's launcher says: the kernel's parent (here the zygote), which it watches
            env = {**(kw.get("env") or {}), "JPY_PARENT_PID": str(zygote.pid)}
            # ipykernel read JPY_PARENT_PID when the zygote imported it (a traitlet default),
            # so a fork's kernel took itself for `ipython kernel` run from a terminal and
            # printed its Ctrl-C note and connection file (a grader path) on its stdout: the
            # student's output. 1 says "a parent that stays": no parent poller (as before, the
            # grader ends its kernels) and no note.
            pid = zygote.spawn(
                [*inner[3:], "--IPKernelApp.parent_handle=1"], plan, env, int(kw["stdout"]), caps, cgroups
            )
        except OSError as exc:
            _NOTE = f"kernel zygote: {exc}; this kernel started the usual way"
            LOG.warning(_NOTE)
            return await launch(kernel_cmd, **kw)
        provisioner.process = ZygoteKernel(zygote, pid)
        provisioner.pid = provisioner.pgid = pid  # its own session: the pgid is its pid
        km._reconcile_connection_info(provisioner.connection_info)

    km._async_launch_kernel = launch_from_zygote
