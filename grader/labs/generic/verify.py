"""`abgrade specs verify` for a lab folder: one line per problem, at its file and line.

- a stored expectation (`expect: {value, nodes, move}`) that reference.py does not meet;
- an accepted variant whose value differs from reference.py's on a case (a variant may
  read otherwise, never answer otherwise);
- a bug replay that reads and returns what reference.py does on every case: no student
  could be told to have it;
- a reference, variant or hook that fails on a case, and random settings that don't work.

And as advice (FolderLab.advice: `specs verify` says it, the check before a grading does
not, since a broken hook only leaves a case unshrunk): a hook `smaller` that, on the first
random cases, fails, yields a case that is not smaller or that the lab can't search, or
yields other cases when asked again.
"""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING

from ...spec import Spec
from ..kit import ShrinkFailed
from ..kit.messages import mismatch
from .cases import FolderCase
from .files import LabError
from .judges import unplain
from .plans import Bench, smaller_plans
from .replays import labels

if TYPE_CHECKING:
    from .adapter import FolderLab

SMALLER_CASES = 3  # random cases (seed 0) whose smaller cases are checked
SMALLER_CANDIDATES = 60  # candidates checked of each (more than the default budget of 40 requests)


def verify_lab(lab: FolderLab, spec: Spec) -> list[str]:
    bench = lab.bench(spec)
    problems: list[str] = []
    shows = {bug.name: False for bug in bench.bugs}
    for case in lab.cases(spec):
        try:
            problems += verify_case(bench, spec, case, shows)
        except LabError as exc:
            problems.append(f"{exc} (case {case.header.name!r})")
    for bug in bench.bugs:
        if not shows[bug.name]:
            problems.append(
                f"{bug.source.shown}: reads and returns what {bench.reference.source.name} does on every case, so no "
                "submission can be diagnosed with it; add a case where it differs"
            )
    if spec.random:
        lab.check_random(spec)
        try:
            for world, call in lab.random_cases(spec, 0)[:2]:
                bench.value(world, call)
        except LabError as exc:
            problems.append(f"{exc} (a random case)")
    return problems


def verify_smaller(lab: FolderLab, spec: Spec, bench: Bench) -> list[str]:
    """The hook `smaller` on the first random cases (seed 0): every candidate it gives (up
    to SMALLER_CANDIDATES) is a case of the lab and strictly smaller (smaller_plans checks
    both), and asking again gives the same candidates (shrinking must be a function of the
    case, or the same submission would show another example on another run)."""
    if not bench.hooks.has("smaller"):
        return []
    with_choice = bench.declarations.choose is not None and spec.policy("choice") is not None
    problems = []
    for number, (world, call) in enumerate(lab.random_cases(spec, 0)[:SMALLER_CASES], 1):
        try:
            asked = [
                [
                    plan.request
                    for plan in islice(smaller_plans(bench, number, world, call, with_choice), SMALLER_CANDIDATES)
                ]
                for _ in range(2)
            ]
        except ShrinkFailed as exc:
            problems.append(exc.detail)  # seed 0's cases are no secret
            continue
        if asked[0] != asked[1]:
            error = bench.hooks.error(
                "smaller",
                f"gave other cases when asked again for random {number}: it must depend on the case alone "
                "(no random draws, nothing kept between calls)",
            )
            problems.append(str(error))
    return problems


def verify_case(bench: Bench, spec: Spec, case: FolderCase, shows: dict[str, bool]) -> list[str]:
    header, world, expect = case.header, case.world, case.header.expect
    problems = []
    search = bench.search_call(case.call, case.window)
    expected = bench.expected(world, search)
    reference = expected[0]
    computed = {"value": reference.get("returned"), "nodes": len(labels(reference))}
    for key, value in computed.items():
        if key in expect and expect[key] != value:
            problems.append(
                mismatch(spec.path, expect.lines.get(key), f"{header.where}.expect.{key}", expect[key], value)
            )
    for run, observation in zip(bench.references[1:], expected[1:]):
        if observation.get("returned") != reference.get("returned"):
            problems.append(
                f"{run.source.shown}: {search.shown()} returns {observation.get('returned')!r}, "
                f"{bench.reference.source.name} {reference.get('returned')!r} (case {header.name!r}): "
                "an accepted variant must agree on values"
            )
    for name, replay in bench.replays(world, search).items():
        if (
            replay.get("error")
            or labels(replay) != labels(reference)
            or replay.get("returned") != reference.get("returned")
        ):
            shows[name] = True
    if "bounds" in header.checks:
        bounds = bench.bounds_case(world, case.call)
        for index in range(len(bounds.calls) if bounds else 0):
            assert bounds is not None
            for name, replay in bounds.replays(index).items():
                reads = labels(bench.reference.observe(world, bounds.calls[index]))
                shows[name] = shows[name] or bool(replay.get("error")) or labels(replay) != reads
    if bench.declarations.choose is not None and "choice" in header.checks:
        move, _ = bench.best_move(world, case.call)
        choose = bench.choose_call(case.call)
        for name, replay in bench.replays(world, choose).items():
            shows[name] = shows[name] or bool(replay.get("error")) or unplain(replay.get("returned")) != move
        if "move" in expect and unplain(expect["move"]) != move:
            problems.append(
                mismatch(spec.path, expect.lines.get("move"), f"{header.where}.expect.move", expect["move"], move)
            )
    return problems
