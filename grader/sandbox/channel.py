"""The grader's end of the private channel: JSON lines over file descriptors (two pipes
for a `.py` worker, one Unix socket for a notebook kernel). Never stdout, never pickle."""
from __future__ import annotations

import json
import os
import select
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class WorkerFailure:
    """Why no answer came: `timeout`, `died` (exit/crash/killed) or `protocol` (garbage)."""

    kind: str
    message: str
    exit_code: int | None = None


class FramedChannel:
    """Sends requests and waits for replies with a deadline. `on_dead` explains an EOF
    (it knows the process); `kill` ends the other side on timeout or garbage."""

    def __init__(self, read_fd: int, write_fd: int, kill: Callable[[], None],
                 on_dead: Callable[[str], WorkerFailure]) -> None:
        self._read_fd, self._write_fd = read_fd, write_fd
        self._kill, self._on_dead = kill, on_dead
        self._buffer = b""

    def send(self, message: dict) -> WorkerFailure | None:
        data = (json.dumps(message) + "\n").encode()
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._write_fd, view):]
        except OSError:
            return self._on_dead("while receiving its input")
        return None

    def receive(self, timeout: float) -> dict | WorkerFailure:
        """The next JSON message, or why none came within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._kill()
                return WorkerFailure("timeout", f"no answer within {timeout:g} s (the time limit)")
            try:
                ready, _, _ = select.select([self._read_fd], [], [], remaining)
            except (OSError, ValueError):
                return self._on_dead("")
            if not ready:
                continue
            try:
                chunk = os.read(self._read_fd, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                return self._on_dead("")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            self._kill()
            return WorkerFailure("protocol", "the observer's reply was not a JSON object (was the channel tampered with?)")
        return message

    def request(self, message: dict, timeout: float) -> dict | WorkerFailure:
        failure = self.send(message)
        return failure if failure else self.receive(timeout)
