"""The seed that a grading's hidden random cases are drawn from, and what a report may say
about it.

A grade must be a function of the submission and the assignment alone, so no command
draws a fresh seed per grading: `grade` and `check` take the spec's own seed (derived from
its digest) or abgrade.yaml's `seed:`; a Gradescope bundle carries a seed drawn once when it
was built; a batch keeps its gradebook's. `--seed N` overrides each of them.

A seed that students must not learn (a Gradescope bundle's, a class's) is `secret`: the
report's note then says that the cases are fixed without giving the number, since with
the number and abgrade a student could rebuild every hidden case.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .spec import Spec

SEED_LIMIT = 10**9  # seeds are whole numbers in [0, SEED_LIMIT): short enough to type


@dataclass(frozen=True)
class Seed:
    """A seed and where it came from (for the note and the terminal)."""

    value: int
    source: str  # where it came from, as a phrase: "given with --seed", "the spec's own", ...
    secret: bool = False  # never written where a student reads it

    def note(self) -> str:
        """The report's note about the random cases: the number only when it is not secret."""
        if self.secret:
            return (
                "random cases drawn from this assignment's own seed (not shown): the same submission "
                "gets the same cases, and the same score, every time"
            )
        return f"random cases generated with seed {self.value} ({self.source}; rerun with --seed {self.value})"


def draw_seed() -> int:
    """A fresh seed, for a seed that is drawn once and then kept (a bundle's, a class's)."""
    return secrets.randbelow(SEED_LIMIT)


def spec_seed(spec: Spec) -> Seed:
    """The spec's own seed: the same for every grading with this spec text, different for
    another lab or an edited spec. Anyone with the spec can compute it (so it is no secret)."""
    digest = hashlib.sha256(f"abgrade seed\0{spec.lab}\0{spec.digest}".encode()).digest()
    return Seed(int.from_bytes(digest[:8], "big") % SEED_LIMIT, "the spec's own")


def chosen_seed(given: int | None, configured: int | None, spec: Spec) -> Seed:
    """`--seed N` first, then abgrade.yaml's `seed:`, then the spec's own (grade, check)."""
    if given is not None:
        return Seed(given, "given with --seed")
    if configured is not None:
        return Seed(configured, "abgrade.yaml's")
    return spec_seed(spec)


def seed_problem(value: object) -> str | None:
    """Why `value` (from a file) is not a seed, or None."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < SEED_LIMIT:
        return f"must be a whole number from 0 to {SEED_LIMIT - 1}, got {value!r}"
    return None
