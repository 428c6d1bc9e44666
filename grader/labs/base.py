"""What a lab adapter provides to the generic grading pipeline.

A lab = one reference module, one spec, one exercise folder and one adapter here. The
adapter turns spec cases into `CasePlan`s: a request for the observer (inputs only) and a
pure `judge` that turns the observations into a verdict per check kind.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

from ..checks import Verdict
from ..sandbox.session import ProbeSetup
from ..spec import Spec



BugSet = frozenset[str] | None


@dataclass(frozen=True)
class Judgement:
    """Verdicts per check kind for one request, and which classic bugs would have produced
    exactly what was observed (None: this request says nothing about bugs). The pipeline
    keeps a diagnosis only if every request that speaks about bugs is consistent with it.
    `consistent_bugs` may be a function: replaying bugs is only worth it when some test
    failed, so the pipeline calls it only then."""

    verdicts: dict[str, Verdict]
    consistent_bugs: BugSet | Callable[[], BugSet] = None

    def bugs(self) -> BugSet:
        found = self.consistent_bugs
        return found() if callable(found) else found


Judge = Callable[[list[dict]], Judgement]


@dataclass
class CasePlan:
    """One request to the student process and how to judge what comes back."""

    case: str
    request: dict
    kinds: tuple[str, ...]
    judge: Judge
    visibility: str | None = None          # overrides the check kind's visibility
    points: dict[str, float] = field(default_factory=dict)  # overrides per kind


class Lab(ABC):
    """A lab's adapter. Subclasses set `name`, `probe` and `api` (name -> call shape)."""

    name: str
    probe: ProbeSetup
    api: dict[str, str]
    bug_hints: dict[str, str] = {}

    def plans(self, spec: Spec, seed: int) -> list[CasePlan]:
        """Every request of a grading run: fixed cases from the spec, then random ones
        generated from `seed`. Raises SpecError for a malformed case."""
        plans = self.fixed_plans(spec)
        if spec.random and spec.random.count:
            if spec.policy("random") is None:
                raise spec.error(spec.raw, "random", "random", "random cases need points under checks.random")
            plans.extend(self.random_plans(spec, seed))
        return plans

    @abstractmethod
    def fixed_plans(self, spec: Spec) -> list[CasePlan]:
        """The requests of the spec's fixed cases (validated as they are read)."""

    @abstractmethod
    def random_plans(self, spec: Spec, seed: int) -> list[CasePlan]:
        """`spec.random.count` generated cases, reproducible from `seed`."""

    @abstractmethod
    def verify(self, spec: Spec) -> list[str]:
        """Recompute every stored expectation with the reference; one line per mismatch."""
