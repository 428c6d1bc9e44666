"""The grader's end of the private channel: JSON lines over file descriptors (two pipes
for a `.py` worker, one Unix socket for a notebook kernel). Never stdout, never pickle.

Everything here is bounded, because the other end runs student code: writes never block
past a deadline (a student can shrink its pipe and stop reading), a line longer than
MAX_LINE_BYTES or nested deeper than MAX_JSON_DEPTH ends the worker with a `protocol`
failure, and the read buffer grows linearly (a newline is looked for only in new data).

Requests may be sent ahead (`request(..., ahead=...)`): the next cases' lines are queued
behind the current one and written while its reply is awaited, as far as the pipe takes
them without blocking, so that the student process starts the next case as soon as it has
answered one, without a round trip through the grader each time. Each reply is still one
line, read and checked on its own; the current request's own bytes are written before its
reply is awaited, as without ahead (nothing queued behind it can hold it up), and the
bytes queued ahead are written only while reading, so neither side can block the other.
"""

from __future__ import annotations

import json
import os
import select
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .deadline import Deadline, Limit, wall_only

MAX_LINE_BYTES = 64 * 2**20  # one reply; real ones are a few KB to a few MB
MAX_JSON_DEPTH = 64  # real replies nest fewer than 20 levels
SEND_SECONDS = 10.0  # deadline of a `send` given no timeout
_READ_CHUNK = 1 << 20
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_NOT_BRACKETS_OR_QUOTES = bytes(b for b in range(256) if b not in b'[]{}"')
_ONE_KIND = bytes.maketrans(b"{}", b"[]")
_PASSES_UP_TO = 1 << 20  # longer texts are measured with numpy


@dataclass
class WorkerFailure:
    """Why no answer came: `timeout`, `died` (exit/crash/killed) or `protocol` (garbage).
    A timeout says which limit passed (`limit`, deadline.py)."""

    kind: str
    message: str
    exit_code: int | None = None
    limit: Limit | None = None


Timeout = float | Deadline  # seconds of wall-clock time, or the limits of a student's request


def as_deadline(timeout: Timeout) -> Deadline:
    """A Deadline as given, or one of plain wall-clock seconds."""
    return timeout if isinstance(timeout, Deadline) else wall_only(timeout)


def _late(limit: Limit, timeout: Timeout, sending: bool) -> WorkerFailure:
    """The timeout failure that names `limit` (a plain number of seconds keeps its old words)."""
    if sending:
        if isinstance(timeout, Deadline):
            said = f"the student process stopped reading its input and ran past {limit.says}"
        else:
            said = (
                f"the student process stopped reading its input (no room for it within {timeout:g} s, the time limit)"
            )
    else:
        said = (
            f"it ran past {limit.says}"
            if isinstance(timeout, Deadline)
            else f"no answer within {timeout:g} s (the time limit)"
        )
    return WorkerFailure("timeout", said, limit=limit)


def json_depth_exceeds(data: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether `data` (JSON text) nests brackets deeper than `limit`, at C speed (no
    recursion, no per-byte Python loop): escapes and strings are cut out, `{}` become
    `[]`; then a short text loses its innermost pairs once per pass (one level each), a
    long one is measured by prefix sums in numpy chunks. Broken JSON is left to the
    parser to reject."""
    if b"\\" in data:  # outside strings a backslash is invalid JSON anyway
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    if len(data) > _PASSES_UP_TO:
        return _deepest(data) > limit
    # the brackets and quotes alone: a `""` there is an empty string, or two strings with no
    # bracket between them (merged, they leave every bracket in or out of a string as it
    # was), so with no quote left every bracket is outside strings (a reply's strings are
    # names: nearly always). Else the strings are cut out of the text first
    brackets = data.translate(_ONE_KIND, _NOT_BRACKETS_OR_QUOTES).replace(b'""', b"")
    if b'"' in brackets:
        brackets = b"".join(data.split(b'"')[::2]).translate(_ONE_KIND, _NOT_BRACKETS)
    for _ in range(limit):
        if not brackets:
            return False
        shorter = brackets.replace(b"[]", b"")
        if len(shorter) == len(brackets):
            return False  # unbalanced: not JSON at all, json.loads says so
        brackets = shorter
    return b"[]" in brackets


def _deepest(data: bytes) -> int:
    """The deepest nesting of JSON text without escapes: the largest running count of
    opening minus closing brackets outside strings (quote parity), 4 MiB at a time."""
    import numpy as np

    step = np.zeros(256, dtype=np.int32)
    step[list(b"[{")], step[list(b"]}")] = 1, -1
    level, deepest, quotes, chunk = 0, 0, 0, 1 << 22
    for start in range(0, len(data), chunk):
        codes = np.frombuffer(data, np.uint8, min(chunk, len(data) - start), start)
        inside = (np.cumsum(codes == ord('"'), dtype=np.int64) + quotes) & 1
        steps = np.where(inside == 1, 0, step[codes])
        sums = np.cumsum(steps)
        deepest = max(deepest, level + int(sums.max()))
        level += int(sums[-1])
        quotes += int(np.count_nonzero(codes == ord('"')))
    return deepest


def parse_json_line(line: bytes | bytearray) -> tuple[object, str | None]:
    """(value, None), or (None, why it was refused): too deep, or not JSON."""
    data = bytes(line)
    if json_depth_exceeds(data):
        return None, f"the observer's reply nests deeper than {MAX_JSON_DEPTH} levels"
    try:
        return json.loads(data), None
    except RecursionError:  # last resort: the depth check should have caught it
        return None, f"the observer's reply nests deeper than {MAX_JSON_DEPTH} levels"
    except ValueError:
        return None, "the observer's reply was not JSON"


class FramedChannel:
    """Sends requests and waits for replies with a deadline. `on_dead` explains an EOF
    (it knows the process); `kill` ends the other side on timeout or garbage."""

    def __init__(
        self, read_fd: int, write_fd: int, kill: Callable[[], None], on_dead: Callable[[str], WorkerFailure]
    ) -> None:
        self._read_fd, self._write_fd = read_fd, write_fd
        self._kill, self._on_dead = kill, on_dead
        self._buffer = bytearray()
        self._scanned = 0  # bytes of the buffer already known to hold no newline
        self._outgoing = bytearray()  # request lines queued, not yet written
        self._ahead: list[tuple[object, int]] = []  # (id, line's bytes) of each request queued behind the current one
        self._input_closed = False  # a write ahead failed: the next request's own write says how
        for fd in {read_fd, write_fd}:
            try:
                os.set_blocking(fd, False)
            except OSError:
                pass

    def send(self, message: dict, timeout: Timeout = SEND_SECONDS) -> WorkerFailure | None:
        """Write one line before the deadline; a full pipe that nobody drains is a timeout."""
        if self._ahead:
            raise ValueError("a request queued ahead must be the next one asked")
        return self._send(message, as_deadline(timeout), timeout)

    def _send(self, message: dict, deadline: Deadline, timeout: Timeout) -> WorkerFailure | None:
        self._outgoing += (json.dumps(message) + "\n").encode()
        return self._flush(len(self._outgoing), deadline, timeout)

    def _flush(self, end: int, deadline: Deadline, timeout: Timeout) -> WorkerFailure | None:
        """Write the first `end` bytes queued before the deadline."""
        while end > 0:
            passed, pause = deadline.check()
            if passed is not None:
                self._kill()
                return _late(passed, timeout, sending=True)
            try:
                _, ready, _ = select.select([], [self._write_fd], [], pause)
                if ready:
                    written = os.write(self._write_fd, memoryview(self._outgoing)[:end])
                    del self._outgoing[:written]
                    end -= written
            except (BlockingIOError, InterruptedError):
                continue
            except (OSError, ValueError):
                return self._on_dead("while receiving its input")
        return None

    def _write_ahead(self) -> None:
        """Write what the pipe takes now of the lines queued ahead, never blocking; a
        failed write leaves them queued (the next request's own write reports it)."""
        try:
            written = os.write(self._write_fd, self._outgoing)
        except (BlockingIOError, InterruptedError):
            return
        except (OSError, ValueError):
            self._input_closed = True
            return
        del self._outgoing[:written]

    def receive(self, timeout: Timeout, kill: bool = True) -> dict | WorkerFailure:
        """The next JSON message, or why none came within `timeout` (seconds, or the limits
        of a Deadline). On a timeout the other side is killed, unless `kill` is false (the
        caller interrupts it first)."""
        return self._receive(as_deadline(timeout), timeout, kill)

    def _receive(self, deadline: Deadline, timeout: Timeout, kill: bool = True) -> dict | WorkerFailure:
        end = self._buffer.find(b"\n", self._scanned)
        while end < 0:
            self._scanned = len(self._buffer)
            if self._scanned > MAX_LINE_BYTES:
                return self._garbage(f"the observer's reply is longer than {MAX_LINE_BYTES // 2**20} MiB")
            passed, pause = deadline.check()
            if passed is not None:
                if kill:
                    self._kill()
                return _late(passed, timeout, sending=False)
            try:
                ahead = [self._write_fd] if self._outgoing and not self._input_closed else []
                ready, writable, _ = select.select([self._read_fd], ahead, [], pause)
                if writable:
                    self._write_ahead()
                if not ready:
                    continue
                chunk = os.read(self._read_fd, _READ_CHUNK)
            except (BlockingIOError, InterruptedError):
                continue
            except (OSError, ValueError):
                chunk = b""
            if not chunk:
                return self._on_dead("")
            self._buffer += chunk
            found = chunk.find(b"\n")
            end = self._scanned + found if found >= 0 else -1
        if end > MAX_LINE_BYTES:
            return self._garbage(f"the observer's reply is longer than {MAX_LINE_BYTES // 2**20} MiB")
        line = self._buffer[:end]
        del self._buffer[: end + 1]
        self._scanned = 0
        message, problem = parse_json_line(line)
        if problem:
            return self._garbage(problem)
        if not isinstance(message, dict):
            return self._garbage("the observer's reply was not a JSON object")
        return message

    def _garbage(self, problem: str) -> WorkerFailure:
        self._kill()
        self._buffer = bytearray()
        self._scanned = 0
        self._outgoing = bytearray()
        self._ahead = []
        return WorkerFailure("protocol", f"{problem} (was the channel tampered with?)")

    def request(self, message: dict, timeout: Timeout, ahead: Sequence[dict] = ()) -> dict | WorkerFailure:
        """Send and wait for the reply; `timeout` covers both. `ahead`: the requests that
        will be asked next, in order (module docstring); those not queued yet are queued
        behind this one. A request queued ahead must be the next one asked."""
        deadline = as_deadline(timeout)
        queued = [key for key, _ in self._ahead]
        if queued and queued[0] != message.get("id"):
            raise ValueError("a request queued ahead must be the next one asked")
        if queued and [m.get("id") for m in ahead[: len(queued) - 1]] != queued[1:]:
            raise ValueError("the requests asked ahead must go on from those queued")
        if queued:
            del self._ahead[0]
        else:
            self._outgoing += (json.dumps(message) + "\n").encode()
        # this request's own bytes end where those queued behind it start (those before it are written)
        end = len(self._outgoing) - sum(size for _, size in self._ahead)
        for later in ahead[len(self._ahead) :]:
            line = (json.dumps(later) + "\n").encode()
            self._outgoing += line
            self._ahead.append((later.get("id"), len(line)))
        failure = self._flush(end, deadline, timeout)
        return failure if failure else self._receive(deadline, timeout)
