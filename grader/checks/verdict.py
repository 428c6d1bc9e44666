"""The outcome of one judgement, before points and visibility are attached."""

from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Verdict:
    """`diagnoses`: names of classic bugs that may explain a failure (see Lab.bug_hints).
    `details`: plain data for pictures in reports (e.g. the tree, both read orders).
    `hint`: what to look at, from which way the observation differs alone (e.g. "your search
    prunes less"); kept apart from the facts in `message` because a diagnosed bug says it
    better: the pipeline shows the hint only when no diagnosis explains the failure.
    `parts`: the checks a rolled-up verdict (a random case's one test) failed, in the order
    the case judges them: what a smaller case must still fail to count as the same failure
    (grader/counterexamples.py)."""

    passed: bool
    message: str
    diagnoses: tuple[str, ...] = field(default_factory=tuple)
    details: dict | None = None
    hint: str = ""
    parts: tuple[str, ...] = ()

    def with_details(self, details: dict | None) -> Verdict:
        return replace(self, details=details)

    def with_diagnoses(self, diagnoses: tuple[str, ...]) -> Verdict:
        return replace(self, diagnoses=tuple(diagnoses))

    @classmethod
    def ok(cls, message: str) -> Verdict:
        return cls(True, message)

    @classmethod
    def fail(cls, message: str, diagnoses: tuple[str, ...] = (), hint: str = "") -> Verdict:
        return cls(False, message, tuple(diagnoses), hint=hint)
