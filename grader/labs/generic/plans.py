"""Requests for a lab folder's observer (inputs only: the case's world and the calls), each
paired with its judge, and the `Bench` that answers the judges' questions with the folder's
own code in the grader: the accepted references, the bug replays and the game's hooks."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from reference.trees import GameTree

from ...checks.bounds import BoundProbe
from ...checks.show import is_number
from ..kit import CasePlan, Shrinkable, ShrinkFailed
from ..kit.smaller_trees import smaller_trees, tree_size, tree_text
from .cases import FolderCase
from .declarations import Declarations
from .files import LabError
from .judges import (
    BoundsCase,
    ChoiceCase,
    RandomCase,
    SearchCase,
    guarded,
    judge_bounds,
    judge_choice,
    judge_random,
    judge_search,
    unplain,
)
from .runs import FULL_WINDOW, Call, GameHooks, HookError, Run
from .smaller import case_size, case_text, tree_of

SEARCH_KINDS = ("value", "nodes", "pruned")


@dataclass(frozen=True)
class Bench:
    """The folder's code that answers for one spec: `references` (reference.py, then the
    spec's accepted variants), `bugs` (replays) and the game's `hooks`."""

    declarations: Declarations
    hooks: GameHooks
    references: tuple[Run, ...]
    bugs: tuple[Run, ...]

    @property
    def reference(self) -> Run:
        return self.references[0]

    def search_call(self, call: dict[str, Any], window: tuple[float, float]) -> Call:
        return Call.of(self.declarations.search, call, self.declarations.state, window)

    def choose_call(self, call: dict[str, Any]) -> Call:
        assert self.declarations.choose is not None
        return Call.of(self.declarations.choose, call, self.declarations.state, None)

    def expected(self, world: dict | None, call: Call) -> tuple[Mapping, ...]:
        """Every accepted reference's observation of `call` (reference.py's with its trace);
        a reference that returns no number is the instructor's error."""
        found = tuple(run.observe(world, call, trace=index == 0) for index, run in enumerate(self.references))
        for run, observation in zip(self.references, found):
            if not is_number(observation.get("returned")):
                raise LabError(
                    run.source.shown,
                    None,
                    call.function,
                    f"{call.shown()} returned {observation.get('returned')!r}, not a number",
                )
        return found

    def replays(self, world: dict | None, call: Call) -> dict[str, Mapping]:
        return {bug.name: bug.observe(world, call) for bug in self.bugs if bug.defines(call.function)}

    def value(self, world: dict | None, call: dict[str, Any]) -> Any:
        """The reference's value of a search call (without window: the full one)."""
        search = self.search_call(call, FULL_WINDOW)
        value = self.reference.observe(world, search).get("returned")
        if not is_number(value):
            raise LabError(
                self.reference.source.shown, None, search.function, f"{search.shown()} returned {value!r}, not a number"
            )
        return value

    def value_after(self, world: dict | None, call: dict[str, Any], move: Any) -> Any:
        """The value after `move` at the call's state (None: the game says it is no move)."""
        child = self.hooks.after(world, call, move)
        return None if child is None else self.value(world, child)

    def best_move(self, world: dict | None, call: dict[str, Any]) -> tuple[Any, Any]:
        """The reference's move at the call's state, and the value after it."""
        choose = self.choose_call(call)
        observation = self.reference.observe(world, choose)
        move = unplain(observation.get("returned"))
        value = self.value_after(world, call, move)
        if value is None:
            raise LabError(
                self.reference.source.shown,
                None,
                choose.function,
                f"{choose.shown()} returned {move!r}, which after() refuses",
            )
        return move, value

    def search_case(
        self, world: dict | None, call: dict[str, Any], window: tuple[float, float], kinds: tuple[str, ...]
    ) -> SearchCase:
        search = self.search_call(call, window)
        return SearchCase(
            call=search,
            kinds=kinds,
            expected=functools.cache(partial(self.expected, world, search)),
            replays=functools.cache(partial(self.replays, world, search)),
            watched=tuple(self.declarations.watch),
            repeats=self.declarations.repeats,
            tree=functools.cache(partial(self.hooks.tree, world, call)),
            root=self.hooks.label(self.hooks.decoded(world, call)[self.declarations.state]),
        )

    def choice_case(self, world: dict | None, call: dict[str, Any]) -> ChoiceCase:
        choose = self.choose_call(call)
        return ChoiceCase(
            call=choose,
            best=functools.cache(partial(self.best_move, world, call)),
            value_after=partial(self.value_after, world, call),
            replays=functools.cache(partial(self.replays, world, choose)),
        )

    def bounds_case(self, world: dict | None, call: dict[str, Any]) -> BoundsCase | None:
        """Calls at every probe the game names (else the case's state) with windows below,
        around, above and touching its true value, each with its bound probe."""
        calls, probes = [], []
        for probe in self.hooks.probes(world, call):
            value = self.value(world, probe)
            step = 1 if isinstance(value, int) else 0.5
            windows = [
                (-math.inf, value - step),
                (value - 2 * step, value - step),
                (value - step, value),
                (value - step, value + step),
                (value, value + step),
                (value + step, value + 2 * step),
                (value + step, math.inf),
            ]
            for alpha, beta in windows:
                search = self.search_call(probe, (alpha, beta))
                calls.append(search)
                probes.append(BoundProbe(search.shown(), alpha, beta, value))
        if not calls:
            return None
        return BoundsCase(tuple(calls), tuple(probes), lambda index: self.replays(world, calls[index]))


def request(case_id: str, world: dict | None, calls: list[Call]) -> dict:
    return {"id": case_id, "world": world, "calls": [call.request() for call in calls]}


def case_plans(bench: Bench, case: FolderCase) -> list[CasePlan]:
    """The requests of one fixed case. What the references read and return is worked out
    here, so that a reference that fails stops the grading before anything runs."""
    header, world = case.header, case.world
    plans = []
    kinds = tuple(k for k in header.checks if k in SEARCH_KINDS)
    if kinds:
        search = bench.search_case(world, case.call, case.window, kinds)
        search.expected()
        plans.append(
            CasePlan(
                header.name,
                request(f"{header.name}/root", world, [search.call]),
                kinds,
                partial(guarded, judge=partial(judge_search, case=search), kinds=kinds),
                header.visibility,
                header.points,
            )
        )
    if "bounds" in header.checks:
        bounds = bench.bounds_case(world, case.call)
        if bounds is not None:
            plans.append(
                CasePlan(
                    header.name,
                    request(f"{header.name}/bounds", world, list(bounds.calls)),
                    ("bounds",),
                    partial(guarded, judge=partial(judge_bounds, case=bounds), kinds=("bounds",)),
                    header.visibility,
                    header.points,
                )
            )
    if "choice" in header.checks and bench.declarations.choose is not None:
        choice = bench.choice_case(world, case.call)
        choice.best()
        plans.append(
            CasePlan(
                header.name,
                request(f"{header.name}/choice", world, [choice.call]),
                ("choice",),
                partial(guarded, judge=partial(judge_choice, case=choice), kinds=("choice",)),
                header.visibility,
                header.points,
            )
        )
    return plans


def random_plan(
    bench: Bench,
    number: int,
    world: dict | None,
    call: dict[str, Any],
    with_choice: bool,
    request_id: str | None = None,
) -> CasePlan:
    """One hidden case, judged on value and reads (and the choice) at once; the references
    run on the judging thread while the student's process loads (`prepare`). With the
    game's hook `smaller`, it shrinks to the cases the hook gives (each its own plan, its
    request named after the case it came from); without it, a tree world shrinks as the
    tree lab's random trees do (`shrinkable`)."""
    name = f"random {number}"
    case = random_case(bench, world, call, with_choice)
    search, choice = case.search, case.choice
    calls = [search.call] + ([choice.call] if choice else [])

    def prepare() -> None:
        try:
            search.expected()
            if choice is not None:
                choice.best()
        except LabError:
            pass  # the judge says so

    return CasePlan(
        name,
        request(request_id or name, world, calls),
        ("random",),
        partial(judge_random, case=case),
        prepare=prepare,
        shrink=shrinkable(bench, number, world, call, with_choice),
    )


def shrinkable(
    bench: Bench, number: int, world: dict | None, call: dict[str, Any], with_choice: bool
) -> Shrinkable | None:
    """How a hidden case is made smaller: by the game's hook `smaller`; else, when its
    world is a tree the grader knows (`graph` and `terminal_nodes`, the state its root), by
    the tree lab's own cuts; else not at all."""
    tree = tree_of(world, call, bench.declarations.state)
    if bench.hooks.has("smaller"):  # in words, a tree world is "a tree of 7 nodes"
        text = tree_text(tree) if tree is not None else case_text(bench.search_call(call, FULL_WINDOW).shown(), world)
        return Shrinkable(case_size(world, call), text, partial(smaller_plans, bench, number, world, call, with_choice))
    if tree is None:
        return None
    return Shrinkable(
        tree_size(tree), tree_text(tree), partial(smaller_tree_plans, bench, number, tree, call, with_choice)
    )


def random_case(bench: Bench, world: dict | None, call: dict[str, Any], with_choice: bool) -> RandomCase:
    search = bench.search_case(world, call, FULL_WINDOW, ("value", "pruned"))
    choice = bench.choice_case(world, call) if with_choice else None
    about = (f"world = {json.dumps(world)}; " if world is not None else "") + f"call = {search.call.shown()}"
    return RandomCase(search, choice, about)


def smaller_plans(
    bench: Bench, number: int, world: dict | None, call: dict[str, Any], with_choice: bool
) -> Iterator[CasePlan]:
    """The plans of the cases the game's `smaller(case)` gives for this one, in its order,
    each checked before it is sent: a case of the lab (its call complete, its state
    decoded, the references search it) and strictly smaller (smaller.py). Anything wrong
    is the course's error: ShrinkFailed, one line naming game.py and the hook, in words
    that hold nothing of the hidden case (its `detail` has all of it)."""
    size = case_size(world, call)
    shown = bench.search_call(call, FULL_WINDOW).shown()
    during = f"(shrinking random {number})"
    try:
        for new_world, new_call in bench.hooks.smaller(world, call):
            missing = [p for p in bench.declarations.call_params if p not in new_call]
            if missing:
                raise bench.hooks.error("smaller", f"yielded a call without {missing[0]!r}")
            new_size = case_size(new_world, new_call)
            if not new_size < size:
                why = "a smaller case has fewer values, or as many and smaller ones"
                raise bench.hooks.error(
                    "smaller",
                    f"yielded a case no smaller than the one it came from (values and magnitude {new_size} from "
                    f"{size}): {why}",
                    f"yielded {bench.search_call(new_call, FULL_WINDOW).shown()}, no smaller than {shown} (values and "
                    f"magnitude {new_size} from {size}): {why}",
                )
            try:
                case = random_case(bench, new_world, new_call, with_choice)  # decodes the state
                case.search.expected()
                if case.choice is not None:
                    case.choice.best()
            except LabError as exc:
                failed = "yielded a case the lab can't search"
                raise bench.hooks.error(
                    "smaller", f"{failed}: {exc.file} failed on it in {exc.field}", f"{failed}: {exc}"
                ) from None
            yield random_plan(bench, number, new_world, new_call, with_choice, f"random {number}/smaller")
    except HookError as exc:
        raise ShrinkFailed(f"{exc} {during}", f"{exc.detail} {during}") from None
    except LabError as exc:  # the game's own hook (encode, setup) on a case the hook yielded
        said = bench.hooks.error("smaller", f"yielded a case {exc.file} failed on in {exc.field}")
        raise ShrinkFailed(f"{said} {during}", f"{said}: {exc} {during}") from None


def smaller_tree_plans(
    bench: Bench, number: int, tree: GameTree, call: dict[str, Any], with_choice: bool
) -> Iterator[CasePlan]:
    """The plans of the tree lab's smaller trees (kit/smaller_trees.py) of a tree world, the
    call's state their root. They are the grader's own candidates, so one the game or the
    reference refuses is passed over, nobody's error (a reference that fails on it fails
    its judge, which the descent passes over too)."""
    state = bench.declarations.state
    for smaller in smaller_trees(tree):
        graph, leaves = smaller.to_mapping()
        world = {"graph": graph, "terminal_nodes": leaves}
        try:
            plan = random_plan(
                bench, number, world, {**call, state: smaller.root}, with_choice, f"random {number}/smaller"
            )
        except LabError:
            continue
        yield plan
