"""Requests for the tree lab's observer (inputs only), each paired with its judge."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from math import inf
from typing import Literal

from reference.tree_search import SearchRules, alphabeta, run_search, true_value
from reference.trees import GameTree

from ...checks import Verdict
from ...checks.bounds import BoundProbe, demanded
from ...checks.show import show_call
from ...spec import Conventions
from ...spec.model import DEFAULT_CONVENTIONS
from ..kit import CasePlan, Judgement, Shrinkable
from ..kit.messages import roll_up
from ..kit.smaller_trees import smaller_trees, tree_size, tree_text
from .cases import BoundsCase, ReadsCall, SearchCase, TreeCase, cutoff_of, other_orders, root_call
from .judges import failing_kinds, judge_bounds, judge_search


def tree_request(case_id: str, tree: GameTree, calls: list[list]) -> dict:
    graph, leaves = tree.to_mapping()
    return {"id": case_id, "graph": graph, "terminal_nodes": leaves, "calls": calls}


def case_plans(case: TreeCase) -> list[CasePlan]:
    header, tree = case.header, case.tree
    plans = []
    root_kinds = tuple(k for k in header.checks if k != "bounds")
    if root_kinds:
        order = tuple(n for n in tree.nodes() if n not in case.pruned)
        cutoff = cutoff_of(case.conventions)
        search = SearchCase(tree, case.value, case.nodes, order, root_kinds, cutoff, other_orders(tree, cutoff))
        plans.append(
            CasePlan(
                header.name,
                tree_request(f"{header.name}/root", tree, [root_call(tree)]),
                root_kinds,
                partial(judge_search, case=search),
                header.visibility,
                header.points,
            )
        )
    if "bounds" in header.checks and tree.internal_nodes():
        paired = bound_probes(tree, case.conventions)
        bounds = BoundsCase(
            tree,
            tuple(call for call, _ in paired),
            tuple(probe for _, probe in paired),
            cutoff_of(case.conventions),
        )
        plans.append(
            CasePlan(
                header.name,
                tree_request(f"{header.name}/bounds", tree, list(bounds.calls)),
                ("bounds",),
                partial(judge_bounds, case=bounds),
                header.visibility,
                header.points,
            )
        )
    return plans


def random_plan(number: int, tree: GameTree, conventions: Conventions = DEFAULT_CONVENTIONS) -> CasePlan:
    return tree_random_plan(f"random {number}", tree, cutoff_of(conventions))


def tree_random_plan(
    name: str,
    tree: GameTree,
    cutoff: Literal[">=", ">"] = ">=",
    request_id: str | None = None,
    diagnose: bool = True,
) -> CasePlan:
    """A random tree's request and judge; it shrinks to smaller trees (each its own plan,
    its request named after the case it came from, its diagnoses put off until it is the
    case shown: Judgement.complete)."""
    result = alphabeta(tree, cutoff=cutoff)
    order = tuple(result.trace.order)
    search = SearchCase(
        tree, result.value, result.nodes, order, ("value", "pruned"), cutoff, other_orders(tree, cutoff), result
    )
    asked = request_id or name
    size = tree_size(tree)
    return CasePlan(
        name,
        tree_request(asked, tree, [root_call(tree)]),
        ("random",),
        partial(judge_random, case=search, diagnose=diagnose),
        shrink=Shrinkable(
            size,
            tree_text(tree),
            # only the strictly smaller trees become plans: shrinking skips the others (a
            # ranked tree's values cut in half are not smaller), and a plan runs the reference
            lambda: (
                tree_random_plan(name, t, cutoff, f"{name}/smaller", diagnose=False)
                for t in smaller_trees(tree)
                if tree_size(t) < size
            ),
        ),
    )


def judge_random(observed: list[ReadsCall], case: SearchCase, diagnose: bool = True) -> Judgement:
    """A random tree, judged on value and reads at once (one `random` test). `diagnose=False`
    (a shrink candidate): only which checks fail, in the verdict's `parts` (all shrinking
    asks), its message, picture and classic bugs worked out only if `complete` is asked for
    (the case shown): the full judgement of every candidate was about a tenth of a failing
    file's CPU in its grader process."""
    if not diagnose:
        failing = failing_kinds(observed, case)
        verdict = replace(Verdict.fail("", ()), parts=failing) if failing else Verdict.ok("")
        return Judgement({"random": verdict}, None, partial(judge_random, observed, case))
    judgement = judge_search(observed, case, diagnose)
    graph, leaves = case.tree.to_mapping()
    details = next(iter(judgement.verdicts.values())).details
    verdict = roll_up(
        judgement.verdicts,
        f"value, node count and pruned set all match on a tree of {len(case.tree)} nodes.",
        dedupe=False,
        suffix=f"\nThe tree: graph = {graph}\nterminal_nodes = {leaves}",
        details=details,
    )
    return Judgement({"random": verdict}, judgement.consistent_bugs)


def bound_probes(tree: GameTree, conventions: Conventions = DEFAULT_CONVENTIONS) -> list[tuple[list, BoundProbe]]:
    """Calls at every internal node with windows below, around, above and touching its
    true value, each paired with what the bound specification (and the course's return
    convention, when it counts only one) demands of it."""
    cutoff = cutoff_of(conventions)
    probes = []
    for node in tree.internal_nodes():
        v = true_value(tree, node)
        step = 1 if isinstance(v, int) else 0.5
        max_player = tree.is_max(node)
        windows = [
            (-inf, v - step),
            (v - 2 * step, v - step),
            (v - step, v),
            (v - step, v + step),
            (v, v + step),
            (v + step, v + 2 * step),
            (v + step, inf),
        ]
        for alpha, beta in windows:
            call = [node, alpha, beta, max_player]
            soft = partial(soft_value, tree, node, alpha, beta, max_player, cutoff)
            demand = demanded(conventions.only, v, alpha, beta, soft)
            probes.append((call, BoundProbe(show_call("alphabeta", *call), alpha, beta, v, **demand)))
    return probes


def soft_value(tree: GameTree, node: str, alpha: float, beta: float, max_player: bool, cutoff: str) -> float:
    """What the course's fail-soft search returns for `alphabeta(node, alpha, beta, max_player)`."""
    return run_search(tree, node, alpha, beta, max_player, SearchRules(cutoff=cutoff)).value  # type: ignore[arg-type]
