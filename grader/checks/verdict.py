"""The outcome of one judgement, before points and visibility are attached."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Verdict:
    """`diagnoses`: names of classic bugs that may explain a failure (see Lab.bug_hints).
    `details`: plain data for pictures in reports (e.g. the tree, both read orders)."""

    passed: bool
    message: str
    diagnoses: tuple[str, ...] = field(default_factory=tuple)
    details: dict | None = None

    def with_details(self, details: dict | None) -> Verdict:
        return Verdict(self.passed, self.message, self.diagnoses, details)

    @classmethod
    def ok(cls, message: str) -> Verdict:
        return cls(True, message)

    @classmethod
    def fail(cls, message: str, diagnoses: tuple[str, ...] = ()) -> Verdict:
        return cls(False, message, diagnoses)
