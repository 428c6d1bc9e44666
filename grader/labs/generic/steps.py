"""A bound on the Python lines a lab folder's hook may run in the grader's process, so that
a hook that loops is the course's error, said in one line, and not a grading that never
ends. The bound is a count of lines executed (a trace function), not a clock: the same
hook on the same case stops at the same place on an idle or a busy machine, so a hook
that works is never cut short by load.

It bounds Python code only: a loop inside one C call (`sum(itertools.count())`) is not
interrupted, and a hook that catches BaseException around its own loop can outlast the
one exception the tracer throws (Python unsets a trace function that raises). The hook is
the course's code, trusted like its reference; this catches mistakes, not malice."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

Tracer = Callable[[FrameType, str, Any], Any]


class StepsExhausted(BaseException):
    """The hook ran more lines than it may: a BaseException, so that a hook's own `except
    Exception` around a loop does not swallow it."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"ran more than {limit:,} lines of Python without finishing (a loop?)")
        self.limit = limit


@contextmanager
def bounded_steps(limit: int) -> Iterator[None]:
    """Run the block with at most `limit` Python lines executed in frames it calls (this
    thread only); beyond that, StepsExhausted is raised where the code is. Whatever trace
    function was set before (a debugger, coverage) is put back afterwards."""
    previous = sys.gettrace()
    count = 0

    def line(frame: FrameType, event: str, arg: Any) -> Tracer | None:
        nonlocal count
        if event == "line":
            count += 1
            if count > limit:
                raise StepsExhausted(limit)
        return line

    def call(frame: FrameType, event: str, arg: Any) -> Tracer | None:
        return line

    sys.settrace(call)
    try:
        yield
    finally:
        sys.settrace(previous)
