"""The worker process: a fresh Python interpreter that runs student code and talks to the
grader over two private pipes as JSON lines. On any expiry its whole process group dies."""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..spec.model import Limits
from .limits import apply_rlimits
from .output import CappedOutput

_BOOTSTRAP = (Path(__file__).parent / "bootstrap.py").read_text()
KILL_GRACE_SECONDS = 0.2


@dataclass
class WorkerFailure:
    """Why no answer came: `timeout`, `died` (exit/crash/killed) or `protocol` (garbage)."""

    kind: str
    message: str
    exit_code: int | None = None


def scrubbed_env(workdir: Path) -> dict[str, str]:
    """A minimal environment: nothing of the grader's leaks into the student process."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(workdir),
        "TMPDIR": str(workdir),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
    }
    for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # needed by some CPUs' OpenBLAS
        if key in os.environ:
            env[key] = os.environ[key]
    return env


class Worker:
    """One student process. `request()` sends a message and waits for the reply."""

    def __init__(self, workdir: Path, limits: Limits) -> None:
        self.limits = limits
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        out_r, out_w = os.pipe()
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOTSTRAP, str(to_child_r), str(from_child_w)],
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=out_w,
            cwd=workdir,
            env=scrubbed_env(workdir),
            pass_fds=(to_child_r, from_child_w),
            start_new_session=True,
            preexec_fn=lambda: apply_rlimits(limits),
        )
        for fd in (to_child_r, from_child_w, out_w):
            os.close(fd)
        self.output = CappedOutput(out_r, limits.output_bytes)
        self._buffer = b""
        self.closed = False

    def send(self, message: dict) -> WorkerFailure | None:
        data = (json.dumps(message) + "\n").encode()
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._to_child, view):]
        except (BrokenPipeError, OSError):
            return self._died("while receiving its input")
        return None

    def receive(self, timeout: float) -> dict | WorkerFailure:
        """The next JSON message, or why none came within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                return WorkerFailure("timeout", f"no answer within {timeout:g} s")
            ready, _, _ = select.select([self._from_child], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                return self._died("")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except ValueError:
            self.kill()
            return WorkerFailure("protocol", "the observer's reply was not valid JSON (was the channel tampered with?)")
        if not isinstance(message, dict):
            self.kill()
            return WorkerFailure("protocol", "the observer's reply was not a JSON object")
        return message

    def request(self, message: dict, timeout: float) -> dict | WorkerFailure:
        failure = self.send(message)
        return failure if failure else self.receive(timeout)

    def _died(self, when: str) -> WorkerFailure:
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        self.kill()
        if code is not None and code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            what = f"was killed by {name}"
            if -code == signal.SIGXCPU:
                what += " (CPU time limit)"
        else:
            what = f"exited with code {code}"
        return WorkerFailure("died", f"the student process {what}{(' ' + when) if when else ''}", code)

    def kill(self) -> None:
        """Terminate the whole process group: SIGTERM, then SIGKILL after a short grace."""
        if self.closed:
            return
        self.closed = True
        for sig, grace in ((signal.SIGTERM, KILL_GRACE_SECONDS), (signal.SIGKILL, 1.0)):
            try:
                os.killpg(self.process.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.process.wait(timeout=grace)
                if sig == signal.SIGTERM:
                    # the leader is gone; children in the group may remain
                    os.killpg(self.process.pid, signal.SIGKILL)
                break
            except subprocess.TimeoutExpired:
                continue
            except (ProcessLookupError, PermissionError):
                break
        self._close_pipes()
        self.output.finish()

    def _close_pipes(self) -> None:
        for name in ("_to_child", "_from_child"):
            fd = getattr(self, name)
            if fd >= 0:
                setattr(self, name, -1)
                try:
                    os.close(fd)
                except OSError:
                    pass

    def close(self) -> None:
        """End a healthy worker: close its input so it exits on its own, then make sure."""
        if self.closed:
            return
        fd, self._to_child = self._to_child, -1
        os.close(fd)
        try:
            self.process.wait(timeout=KILL_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # anything it left behind
        except (ProcessLookupError, PermissionError):
            pass
        self.kill()
