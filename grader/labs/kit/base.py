"""What a lab provides to the generic grading pipeline, and what it declares about itself.

A lab = one reference module, one spec, one exercise folder and one package
`grader/labs/<lab>/` registered under the entry-point group `abgrade.labs`. Its `Lab`
subclass reads the spec's cases (`cases`) and turns each into `CasePlan`s: a request for
the observer (inputs only) and a pure `judge` that turns the observations into a verdict
per check kind. It also declares its own check kinds, the observation fields to sanitise,
the hints of the classic bugs it diagnoses and the picture reports draw for its cases.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from ...checks import Verdict
from ...observations import FieldKind
from ...sandbox.channel import WorkerFailure
from ...sandbox.session import ProbeSetup
from ...spec import Spec
from .state import with_state_hint

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
    # A judge may put the diagnoses off (a shrink candidate's: shrinking asks only whether
    # it still fails the same check, and shows the last one found): `complete` then gives
    # the same judgement with them, the same verdicts otherwise.
    complete: Callable[[], Judgement] | None = None
    # `bugs_among`'s cheaper way, when the judge has one: bugs() & among (None where bugs()
    # is None), replaying only the bugs named in `among` (a request of many calls, each
    # replayed with every classic bug, was most of a failing file's diagnosing)
    narrowed: Callable[[frozenset[str]], BugSet] | None = None

    def bugs(self) -> BugSet:
        found = self.consistent_bugs
        return found() if callable(found) else found

    def bugs_among(self, among: frozenset[str]) -> BugSet:
        """The classic bugs consistent with this request among `among` (the ones every
        other request left): bugs() & among, None where bugs() is None."""
        if self.narrowed is not None:
            return self.narrowed(among)
        found = self.bugs()
        return found if found is None else found & among

    def completed(self) -> Judgement:
        """This judgement with every diagnosis a judge put off."""
        return self if self.complete is None else self.complete()


Judge = Callable[[list[dict]], Judgement]
# An interactive plan's way to the student process: one request -> its calls' observations
# (sanitised) or the WorkerFailure that ended it.
Ask = Callable[[dict], "list[dict] | WorkerFailure"]


@dataclass
class CasePlan:
    """One request to the student process and how to judge what comes back."""

    case: str
    request: dict
    kinds: tuple[str, ...]
    judge: Judge
    visibility: str | None = None  # overrides the check kind's visibility
    points: dict[str, float] = field(default_factory=dict)  # overrides per kind
    # An interactive plan (a game, where each request depends on the answers before it):
    # `play(ask)` makes its requests through `ask` and returns the observations its judge
    # reads, or the WorkerFailure that stopped it; `request` then only names it ({"id"}).
    play: Callable[[Ask], list[dict] | WorkerFailure] | None = None
    # Work the judge will need that doesn't depend on the answers (a random case's reference
    # search): run on the judging thread from the start, while the student's process loads.
    prepare: Callable[[], object] | None = None
    # A random case that can be made smaller when the student's search fails it (the
    # smallest failing case, grader/counterexamples.py); None: it can't.
    shrink: Shrinkable | None = None


@dataclass(frozen=True)
class Shrinkable:
    """How a random case is made smaller. `size`: its measures, most important first
    (nodes, empty cells, then values, depth...), compared as a tuple: every candidate is
    smaller, so shrinking ends. `smaller()`: candidate cases, each a plan of the same shape
    (a request of inputs only, the same `random` judge) with a `shrink` of its own, in the
    order they are tried (the biggest cut first); a pure function of the case, so the same
    submission shrinks to the same example. `text`: the size in words ("a tree of 7 nodes")."""

    size: tuple[int, ...]
    text: str
    smaller: Callable[[], Iterable[CasePlan]]


class ShrinkFailed(Exception):
    """A lab's own way of making a case smaller failed: the course's error, not the
    student's (a lab folder's hook `smaller` that raised, looped or gave a case that is not
    smaller or not valid). Raised while `Shrinkable.smaller()` is iterated; shrinking stops
    there, the case is not shrunk, the grade is unchanged, and the message (one line naming
    the file and the hook) goes to the report's notes. Notes reach a student's feedback
    page, so the message holds nothing of the hidden case; `detail` is the whole reason,
    for where the case is not hidden (`abgrade specs verify` on seed 0's cases)."""

    def __init__(self, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.detail = detail or message


class LabCase(Protocol):
    """A fixed case of a spec, validated as it is read; it recomputes its own expectations."""

    def verify(self, path: str) -> list[str]: ...


class Lab(ABC):
    """A lab. Subclasses set `name`, `probe`, `api` (name -> call shape) and `kinds`, and
    implement `cases`, `random_plans` and `check_random`."""

    name: ClassVar[str]
    probe: ClassVar[ProbeSetup]
    api: ClassVar[dict[str, str]]
    kinds: ClassVar[tuple[str, ...]] = ()  # check kinds this lab's cases produce (shared ones too)
    # classic bug -> one-line hint; the judges name bugs, the pipeline keeps those that
    # explain every case (see Judgement), and writers show the hint as "Likely cause"
    bug_hints: ClassVar[Mapping[str, str]] = {}
    # observation fields of this lab's observer that the sanitiser types (observations.py);
    # undeclared fields are kept as plain, cleaned JSON
    observed_fields: ClassVar[Mapping[str, FieldKind]] = {}
    # A lab that lives in a folder of its own (README, "Write your own lab") says where its
    # spec and its solution are, which folders the student process must not see, and the
    # top-level spec fields of its own; an installed lab leaves these to specs/LAB.yaml,
    # reference/solutions/LAB.py and the sandbox's private folders.
    spec_file: ClassVar[Path | None] = None
    solution_file: ClassVar[Path | None] = None
    private_dirs: ClassVar[tuple[Path, ...]] = ()
    spec_fields: ClassVar[tuple[str, ...]] = ()
    # files a student's starting copy needs beside it, name -> text (a lab folder's game
    # module, which the student's code imports)
    student_files: ClassVar[Mapping[str, str]] = {}
    # the conventions a spec of this lab may declare (`cutoff`, `returns`: spec.Conventions),
    # which its reference, stored expectations, accepted variants and diagnoses follow
    conventions: ClassVar[tuple[str, ...]] = ()
    # True when the plans of one (spec, seed) keep nothing a grading changes (pure judges
    # over frozen cases): a batch's grader process then builds them once and grades every
    # submission with them (batch/task.py). False (the default) where a plan keeps what a
    # grading played (the agents lab's matches record their games): each grading gets its own.
    reusable_plans: ClassVar[bool] = False

    def adopt(self, spec: Spec) -> Spec:
        """The spec as this lab grades with it (default: as read). A lab folder folds its
        game's and references' digest into `spec.digest`, so that a batch regrades when
        they change."""
        return spec

    def repeat_plan(self, candidates: Sequence[CasePlan]) -> CasePlan | None:
        """The case the pipeline asks again once every case is in, to tell state kept between
        calls (kit/state.py), among `candidates` (the visible cases, in order); None (the
        default): this lab asks nothing again (a clock or a game may make a correct search
        answer otherwise the second time). The probe changes no score, but costs the student's
        process that case's time: a lab picks a cheap one."""
        return None

    def hints(self, spec: Spec) -> Mapping[str, str]:
        """The classic bugs' hints in the words of `spec`'s course (its conventions: a
        strict course's "cut off when alpha > beta"); default: `bug_hints`, and state kept
        between calls (kit/state.py)."""
        return with_state_hint(self.bug_hints)

    def picture(self, details: Mapping[str, Any]) -> str:
        """HTML (inline SVG) for a test's `details`; '' when the lab draws nothing."""
        return ""

    def plans(self, spec: Spec, seed: int) -> list[CasePlan]:
        """Every request of a grading run: fixed cases from the spec, then random ones
        generated from `seed`. Raises SpecError for a malformed case."""
        return self.with_random(spec, seed, self.fixed_plans(spec))

    def with_random(self, spec: Spec, seed: int, plans: list[CasePlan]) -> list[CasePlan]:
        """`plans` followed by the spec's random cases generated from `seed`."""
        if spec.random and spec.random.count:
            if spec.policy("random") is None:
                raise spec.error(spec.raw, "random", "random", "random cases need points under checks.random")
            plans.extend(self.random_plans(spec, seed))
        return plans

    def fixed_plans(self, spec: Spec) -> list[CasePlan]:
        """The requests of the spec's fixed cases (validated as they are read)."""
        return [plan for case in self.cases(spec) for plan in self.case_plans(case)]

    def case_plans(self, case: Any) -> list[CasePlan]:
        """The requests of one fixed case (default: the case plans itself)."""
        return case.plans()

    def verify(self, spec: Spec) -> list[str]:
        """Recompute every stored expectation with the reference; one line per mismatch."""
        problems = [problem for case in self.cases(spec) for problem in case.verify(spec.path)]
        if spec.random:
            self.check_random(spec)  # the generator settings must work
        return problems

    def advice(self, spec: Spec) -> list[str]:
        """Problems `abgrade specs verify` reports that don't stop a grading (the check
        before `grade` leaves them out): a lab folder's optional hook `smaller`, whose failure
        only leaves a case unshrunk. Default: none."""
        return []

    @abstractmethod
    def cases(self, spec: Spec) -> Sequence[LabCase]:
        """The spec's fixed cases, validated; raises SpecError."""

    @abstractmethod
    def random_plans(self, spec: Spec, seed: int) -> list[CasePlan]:
        """`spec.random.count` generated cases, reproducible from `seed`."""

    @abstractmethod
    def check_random(self, spec: Spec) -> None:
        """Raise SpecError when the spec's random settings can't generate cases."""
