"""The smallest failing case: when a random case fails, smaller cases made from it are sent
to the student's process as ordinary case requests (inputs only) and judged here, as the
random case was, while the search still fails the same check; the smallest one found is
shown as a worked example (grader/counterexample.py).

The strategy is a greedy descent of our own, not a library's: each random case lists its
smaller cases in a fixed order (Shrinkable.smaller: a subtree cut, a move played, a depth
lowered), and the first of them that still fails becomes the case to shrink next, until
none does or the spec's budget is spent. Why not hypothesis's shrinker: it shrinks the
choice sequence a generator drew, which is internal API (not meant to be driven from
outside a test), and it would have to replay our generators through hypothesis's own
strategies; a student call here costs a request to another process, so a small fixed list
of cuts that keep a case legal (a tree stays a tree, a position stays reachable) is both
cheaper and easier to keep deterministic.

A grade never depends on shrinking: it runs after every graded case was judged and its
requests are not counted in any test (a limit it hits stops shrinking, nothing else). What
it finds is a function of the submission and the assignment: the candidates are a pure
function of the case, the budget is counted in requests and in the student process's CPU
time (which load doesn't change), so the same file shows the same example unless the CPU
budget ends shrinking half-way (the spec's default leaves room for many calls)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .checks import Verdict
from .labs.kit import CasePlan, Judgement, ShrinkFailed
from .sandbox.channel import WorkerFailure
from .spec.model import ShrinkPolicy

Run = Callable[[CasePlan, float], "Judgement | WorkerFailure"]  # (plan, CPU seconds it may take) -> judged


@dataclass(frozen=True)
class Shrunk:
    """The smallest case found for one failed random case: its plan, its random verdict
    (failing `check`) and its judgement (for the diagnoses), and what shrinking cost."""

    original: CasePlan
    plan: CasePlan
    check: str
    verdict: Verdict
    judgement: Judgement
    calls: int
    stopped: str  # a key of counterexample.STOPS


class Budget:
    """What is left of the spec's budget: requests, and CPU seconds of the student's process
    (read from `cpu`, the session's own meter) counted from the first request."""

    def __init__(self, policy: ShrinkPolicy, cpu: Callable[[], float]) -> None:
        self.policy, self.cpu = policy, cpu
        self.calls = 0
        self.started = cpu()

    def seconds_left(self) -> float:
        return self.policy.seconds - (self.cpu() - self.started)

    def spent(self) -> str | None:
        """Why no more request may be sent (a key of STOPS), or None."""
        if self.calls >= self.policy.calls:
            return "calls"
        if self.seconds_left() <= 0:
            return "seconds"
        return None


def random_failure(judgement: Judgement) -> Verdict | None:
    """The failed `random` verdict of a judgement, if it failed with named checks."""
    verdict = judgement.verdicts.get("random")
    return verdict if verdict is not None and not verdict.passed and verdict.parts else None


def shrink_all(
    judged: list[tuple[CasePlan, Judgement]],
    run: Run,
    policy: ShrinkPolicy,
    cpu: Callable[[], float],
    problems: list[str] | None = None,
) -> dict[int, Shrunk]:
    """Shrink the failed random cases of `judged` (index -> what was found), the first one
    that fails each check only (a second failure of the same check would shrink to much the
    same case), within one budget for the whole submission. A lab whose own way of making
    a case smaller fails (ShrinkFailed: the course's error) leaves that case unshrunk and
    ends shrinking; its one-line message is added to `problems`."""
    found: dict[int, Shrunk] = {}
    if not policy.enabled:
        return found
    budget = Budget(policy, cpu)
    checks: set[str] = set()
    for index, (plan, judgement) in enumerate(judged):
        failed = random_failure(judgement)
        if plan.shrink is None or failed is None or failed.parts[0] in checks:
            continue
        checks.add(failed.parts[0])
        try:
            shrunk = shrink_one(plan, failed, judgement, run, budget)
        except ShrinkFailed as exc:
            if problems is not None:
                problems.append(str(exc))
            break
        if shrunk.plan is not plan:
            found[index] = shrunk
        if shrunk.stopped != "smallest":
            break  # the budget (or the submission's time) is spent
    return found


def shrink_one(plan: CasePlan, failed: Verdict, judgement: Judgement, run: Run, budget: Budget) -> Shrunk:
    """Greedy descent from `plan`: the first smaller case that still fails the same check
    (the first check `failed` names) replaces it, until none does or the budget is spent.
    A candidate's judge may put its diagnoses off (Judgement.complete: replaying the
    classic bugs on each step's tree was most of a failing submission's shrinking); only
    the case found is diagnosed."""
    check = failed.parts[0]
    current, verdict, judged = plan, failed, judgement

    def found(stopped: str) -> Shrunk:
        complete = judged.completed()
        shown = random_failure(complete) or verdict  # the same verdict, its diagnoses in
        return Shrunk(plan, current, check, shown, complete, budget.calls, stopped)

    while True:
        assert current.shrink is not None
        size = current.shrink.size
        for candidate in current.shrink.smaller():
            if candidate.shrink is None or not candidate.shrink.size < size:
                continue  # only strictly smaller cases, so the descent ends
            stop = budget.spent()
            if stop is not None:
                return found(stop)
            budget.calls += 1
            outcome = run(candidate, budget.seconds_left())
            if isinstance(outcome, WorkerFailure):
                if outcome.limit is not None and outcome.limit.scope == "submission":
                    return found("submission")
                continue  # a crash or a case limit is another failure than the one shown
            again = random_failure(outcome)
            if again is not None and check in again.parts:
                current, verdict, judged = candidate, again, outcome
                break
        else:
            return found("smallest")
