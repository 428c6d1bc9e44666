"""The lab-independent part of a spec, as dataclasses. Lab-specific case fields stay raw
(`LineDict`s with line numbers) until the lab's adapter parses them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import SpecError

if TYPE_CHECKING:
    from .yaml_lines import LineDict


# Below this a student process can't be trusted to start: the interpreter, numpy and a
# Jupyter kernel need about 100 MB resident (measured: a kernel grades at 128 MB under a
# memory cgroup). Where the machine has no memory cgroup, a kernel's address-space cap is
# raised to a floor it starts under (sandbox/limits.py), whatever the spec says.
MIN_MEMORY_MB = 128


@dataclass(frozen=True)
class Limits:
    """Resource limits for one submission (DESIGN.md defaults)."""

    case_seconds: float = 10.0
    cell_seconds: float = 30.0
    submission_seconds: float = 120.0
    load_seconds: float = 60.0  # the import or the notebook's cells; at most submission_seconds
    memory_mb: int = 2048
    output_bytes: int = 1_000_000
    recursion_limit: int = 10_000
    file_mb: int = 64
    processes: int = 64


@dataclass(frozen=True)
class CheckPolicy:
    """Points and visibility of one check kind (per case, or per submission for load/limits)."""

    kind: str
    points: float
    visibility: str = "visible"


@dataclass(frozen=True)
class ShrinkPolicy:
    """The smallest failing case (grader/counterexamples.py): when a random case fails, the
    grader tries smaller cases, at most `calls` requests to the student's process and
    `seconds` of its CPU time in all (0 calls: never); `reveal`: the smallest one found is
    shown to students even when the random tests are hidden (it is a small case made from
    the hidden one, not the hidden one)."""

    calls: int = 40
    seconds: float = 20.0
    reveal: bool = True

    @property
    def enabled(self) -> bool:
        """Whether any smaller case may be tried at all."""
        return self.calls > 0 and self.seconds > 0


@dataclass(frozen=True)
class RandomPolicy:
    """Hidden generated cases: how many, how they are built (lab-specific `params`), and how
    a failing one is shrunk (`shrink`: the spec's `random.shrink` and
    `random.reveal_counterexample`)."""

    count: int
    params: dict[str, Any]
    line: int | None = None
    shrink: ShrinkPolicy = ShrinkPolicy()


CUTOFFS = ("inclusive", "strict")
RETURNS = ("fail-soft", "fail-hard")


@dataclass(frozen=True)
class Conventions:
    """The course's conventions (the spec's `conventions:`), which the reference, the stored
    expectations, the accepted variants and the diagnoses follow. `cutoff`: "inclusive"
    prunes as soon as alpha >= beta (the default), "strict" only when alpha > beta (the
    CS188 way: never prune on equality). `returns`: what a search may return on a narrowed
    window: both (the default: anything the bound specification allows), or only
    "fail-soft" (the best value found, even outside the window) or only "fail-hard" (the
    value clamped into the window)."""

    cutoff: str = "inclusive"
    returns: frozenset[str] = frozenset(RETURNS)

    @property
    def strict(self) -> bool:
        return self.cutoff == "strict"

    @property
    def only(self) -> str | None:
        """The one return convention that counts as correct, or None when both do."""
        return next(iter(self.returns)) if len(self.returns) == 1 else None


DEFAULT_CONVENTIONS = Conventions()


@dataclass
class Spec:
    """A spec file as read: the lab-independent fields, its cases still raw."""

    lab: str
    version: str
    title: str
    path: str
    digest: str
    limits: Limits
    checks: dict[str, CheckPolicy]
    cases: list[LineDict]
    random: RandomPolicy | None
    raw: LineDict = field(repr=False)
    conventions: Conventions = DEFAULT_CONVENTIONS

    def error(self, container: Any, key: Any, field_name: str, problem: str) -> SpecError:
        """A SpecError pointing at `key` inside `container` (a parsed YAML node)."""
        from .yaml_lines import line_of

        return SpecError(self.path, line_of(container, key), field_name, problem)

    def error_at(self, container: Any, key: Any, problem: str) -> SpecError:
        """A SpecError at `key` inside `container`, the field named from the node's own place
        in the file (no `where` strings to pass around)."""
        from .yaml_lines import field_path

        return self.error(container, key, field_path(container, key), problem)

    def policy(self, kind: str) -> CheckPolicy | None:
        return self.checks.get(kind)
