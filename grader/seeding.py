"""The seed that a grading's hidden random cases are drawn from, and what a report may say
about it.

A grade must be a function of the submission and the assignment alone, so no command
draws a fresh seed per grading: `grade` and `check` take the spec's own seed (derived from
its digest) or abgrade.yaml's `seed:`; a Gradescope bundle carries a seed drawn once when it
was built; a batch keeps its gradebook's. `--seed N` overrides each of them.

A seed that students must not learn (a Gradescope bundle's, a class's) is `secret`: the
report's note then says that the cases are fixed without giving the number, since with
the number and abgrade a student could rebuild every hidden case.

The student's process gets its own generators (`random`, numpy's global one) seeded too,
from `student_seed`: a value derived one-way from the seed, so that a search that picks
at random among tied moves makes the same picks every time, and the state a student can
read (`random.getstate()`) doesn't give the seed away.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from .digests import sha256

if TYPE_CHECKING:
    from .spec import Spec

SEED_LIMIT = 10**9  # seeds are whole numbers in [0, SEED_LIMIT): short enough to type
STUDENT_SEED_LIMIT = 2**32  # what numpy.random.seed takes (random.seed takes any int)
_STUDENT_LABEL = b"abgrade student random\0"
# scrypt's cost for a secret seed: about 0.1 s of one core and 16 MiB, once per grader
# process (memoized), so that trying all 10**9 seeds against a value a student read costs
# CPU-years rather than the minutes a plain hash of a 30-bit seed would
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


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
    import secrets  # only here: its imports (hmac, OpenSSL's libcrypto) cost a grade's start-up 5 ms

    return secrets.randbelow(SEED_LIMIT)


def spec_seed(spec: Spec) -> Seed:
    """The spec's own seed: the same for every grading with this spec text, different for
    another lab or an edited spec. Anyone with the spec can compute it (so it is no secret)."""
    digest = sha256(f"abgrade seed\0{spec.lab}\0{spec.digest}".encode()).digest()
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


def student_seed(seed: Seed) -> int:
    """The value the student's process seeds `random` and numpy's global generator with:
    derived one-way from `seed` (a fixed label and the seed, hashed), the same for every
    grading with this seed. A secret seed goes through scrypt, a deliberately slow hash:
    a student can read the value back from its generator's state, and with a plain hash
    could then try every seed; a public seed (the spec's own, --seed) needs no such cost."""
    return _student_seed(seed.value, seed.secret)


@lru_cache(maxsize=8)
def _student_seed(value: int, secret: bool) -> int:
    text = _STUDENT_LABEL + str(value).encode()
    if secret:
        import hashlib  # scrypt is OpenSSL's (loaded for a secret seed only)

        digest = hashlib.scrypt(text, salt=_STUDENT_LABEL, dklen=8, **_SCRYPT)
    else:
        digest = sha256(text).digest()
    return int.from_bytes(digest[:8], "big") % STUDENT_SEED_LIMIT
