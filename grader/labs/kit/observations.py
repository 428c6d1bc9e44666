"""Typed observations and requests: what an observer sends back for each call, and what a
request asks it to call.

Every observer answers a call with at least `returned` (the value as plain data: numbers,
strings, or a type-and-repr record), `error` (None, or the exception's record: type,
message, the student's frames, and whether it ended the process) and `seconds`.
A lab declares its own extra fields as a subclass, next to its observer:

    class BoardCall(CallObservation, total=False):
        points: Any
        expanded: list[str]

and its judges take `observed: list[BoardCall]`. The fields are all optional (`total=False`):
observations come from the student's process and were only sanitised, so a judge reads
them with `.get` and copes with anything missing; `answer_at` stands in the NoAnswer
observation for a call that never answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict, TypeVar, cast

from .messages import NO_ANSWER_ERROR

# Set by the grader (never the observer) on every call of an interactive plan's request: the
# CPU seconds the student's process used for the whole request, by the grader's own
# measurement (its cgroup), which the student's code can lengthen but never shorten.
STUDENT_CPU = "student_cpu_seconds"


class CallObservation(TypedDict, total=False):
    """One call as every observer reports it."""

    returned: Any
    error: dict[str, Any] | None  # type, message, frames, exit, memory, recursion
    seconds: float


class CallRequest(TypedDict, total=False):
    """One call as a request asks for it: the function and its arguments (labs add what
    their observer needs, e.g. a board or a state, and whether to trace the search)."""

    function: str
    args: list[Any]
    trace: bool | int  # whether to trace the search, or (negamax) how many of its steps to keep


Observation = TypeVar("Observation", bound=CallObservation)

NO_ANSWER_CALL: CallObservation = {"error": NO_ANSWER_ERROR}  # as messages.NO_ANSWER, typed


def answer_at(calls: Sequence[Observation], index: int = 0) -> Observation:
    """The observation of call `index`, or NO_ANSWER_CALL when the process stopped before it
    (the typed `messages.answer`)."""
    if index < len(calls) and isinstance(calls[index], dict):
        return calls[index]
    return cast(Observation, NO_ANSWER_CALL)
