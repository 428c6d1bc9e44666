"""`load`: the submission runs and defines the lab's API with usable signatures."""

from __future__ import annotations

from typing import Any, Protocol

from .show import describe_error
from .verdict import Verdict


class LoadObservation(Protocol):
    """What the observer saw while loading (grader.sandbox.session.LoadObservation); judged
    here without importing the sandbox."""

    api: dict[str, Any]
    error: dict | None
    failure: Any  # a WorkerFailure (with .message) or None
    problem: str | None
    notes: list[str]


# a notebook's names are looked up once every cell has run (as after Jupyter's Run All)
_AFTER_CELLS = " after the last cell (a later `del`, `%reset` or a cell that failed before its `def` leaves none)"

# SyntaxError and its subclasses: the file never ran, so the place of the error is the news
SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError")


def check_load(observation: LoadObservation, api: dict[str, str], file: str) -> tuple[Verdict, bool]:
    """(verdict, usable): `usable` is whether cases can run at all. An exception while
    loading is reported but does not fail `load` when the API is still defined: a broken
    demo line at the bottom of a file should not hide a correct function."""
    notes = "".join(f"\nNote: {note}" for note in observation.notes)
    if observation.problem is not None:
        return Verdict.fail(f"{file}: {observation.problem}"), False
    if observation.failure is not None:
        return Verdict.fail(
            f"{file}: the submission did not finish loading: {observation.failure.message}.{notes}"
        ), False
    error = observation.error or {}
    if error.get("type") in SYNTAX_ERRORS:
        line = error.get("line")
        where = f"{file}:{line}" if isinstance(line, int) else file
        text = f": {error['text'].strip()}" if error.get("text") else ""
        return Verdict.fail(f"{where}: {error['type']}: {error.get('message')}{text}{notes}"), False
    problems = []
    for name, shape in api.items():
        found = observation.api.get(name, {})
        if not found.get("defined"):
            when = _AFTER_CELLS if file.endswith(".ipynb") else ""
            problems.append(f"{file}: no `{name}` is defined{when}; the grader calls {shape}")
        elif not found.get("callable"):
            problems.append(f"{file}: `{name}` is not a function; the grader calls {shape}")
        elif not found.get("arity_ok"):
            where = f"{file}:{found.get('line')}" if found.get("line") else file
            problems.append(f"{where}: {found.get('signature', name)} cannot be called as {shape}")
    loading_error = ""
    if observation.error:
        loading_error = f"While loading, the submission raised {describe_error(observation.error)}"
    if problems:
        message = "\n".join(problems) + (f"\n{loading_error}" if loading_error else "") + notes
        return Verdict.fail(message), False
    names = ", ".join(api)
    if loading_error:
        return Verdict.ok(
            f"{file} defines {names}. Note: {loading_error}\n(grading goes on with what was defined){notes}"
        ), True
    return Verdict.ok(f"{file} loads and defines {names}.{notes}"), True
