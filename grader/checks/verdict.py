"""The outcome of one judgement, before points and visibility are attached."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Verdict:
    passed: bool
    message: str
    diagnoses: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def ok(cls, message: str) -> Verdict:
        return cls(True, message)

    @classmethod
    def fail(cls, message: str, diagnoses: tuple[str, ...] = ()) -> Verdict:
        return cls(False, message, diagnoses)
