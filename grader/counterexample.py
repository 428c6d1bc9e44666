"""The smallest failing case: a record of what shrinking a failed random case found
(grader/shrinking.py finds it), kept in the random test's `details` so that the gradebook
keeps it with the test, and the words every writer shows it in.

A random case is hidden; the counterexample is a case made smaller from it, so a spec may
show it to students even when the random tests are withheld (`random.reveal_counterexample`,
on by default): `revealed` says so, and `shown` is the one rule every writer follows."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from .results import TestResult

KEY = "counterexample"  # its place in a test's details
TITLE = "Smallest failing case"

# why shrinking stopped, in words
STOPS = {
    "smallest": "no smaller case tried fails the same way",
    "calls": "the spec's budget of calls ran out",
    "seconds": "the spec's budget of CPU time ran out",
    "submission": "the submission's time ran out",
}


@dataclass(frozen=True)
class Counterexample:
    """The smallest case found on which the student's search still fails `check` the way
    it failed the random case `case`. `output` is that case's verdict as a test's output
    (what was seen against what was expected, the likely cause under the first line, the
    case written out); `details` its picture; `size` and `original_size` the measures
    (Shrinkable.size) of the case and of the random case it came from, `text` and
    `original_text` the same in words; `calls` the requests shrinking sent; `stopped` why it
    stopped (a key of STOPS)."""

    case: str
    check: str
    text: str
    original_text: str
    size: tuple[int, ...]
    original_size: tuple[int, ...]
    output: str
    cause: str
    details: dict | None
    calls: int
    stopped: str
    revealed: bool

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["size"], data["original_size"] = list(self.size), list(self.original_size)
        return data

    @classmethod
    def from_json(cls, data: Any) -> Counterexample | None:
        """The record in a test's details (None when it holds none, or one it can't read:
        a gradebook from before, or a shape this version doesn't know)."""
        if not isinstance(data, dict):
            return None
        try:
            return cls(
                case=str(data["case"]),
                check=str(data["check"]),
                text=str(data["text"]),
                original_text=str(data["original_text"]),
                size=tuple(int(n) for n in data["size"]),
                original_size=tuple(int(n) for n in data["original_size"]),
                output=str(data["output"]),
                cause=str(data.get("cause", "")),
                details=data["details"] if isinstance(data.get("details"), dict) else None,
                calls=int(data.get("calls", 0)),
                stopped=str(data.get("stopped", "smallest")),
                revealed=bool(data.get("revealed", False)),
            )
        except (KeyError, TypeError, ValueError):
            return None

    @property
    def headline(self) -> str:
        """One line: where it came from and how far it shrank."""
        return (
            f"{TITLE} ({self.case}, {self.check}): {self.text}, shrunk from {self.original_text} "
            f"({self.calls} smaller cases tried; {STOPS.get(self.stopped, self.stopped)})."
        )

    def lines(self) -> list[str]:
        """The headline and the case's verdict, as a writer shows them in full."""
        return [self.headline, *self.output.splitlines()]


def counterexample_of(test: TestResult) -> Counterexample | None:
    return Counterexample.from_json(test.details.get(KEY)) if test.details else None


def shown(tests: Iterable[TestResult], show_hidden: bool = False) -> list[Counterexample]:
    """The counterexamples a reader may see: a visible test's, a revealed one's (the spec's
    choice), or any when hidden details are shown."""
    found = []
    for test in tests:
        example = counterexample_of(test)
        if example is not None and (show_hidden or test.visibility == "visible" or example.revealed):
            found.append(example)
    return found


def attach(test: TestResult, example: Counterexample) -> None:
    """Keep `example` in the test's details (next to its own picture, if any)."""
    test.details = {**(test.details or {}), KEY: example.to_json()}
