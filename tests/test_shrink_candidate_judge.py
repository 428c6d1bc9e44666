"""A shrink candidate of the tree lab is judged only for which checks it fails
(labs/tree/judges.failing_kinds): shrinking asks nothing else, and the case it shows is
judged in full. These properties hold the quick answer to the full judgement's `parts` on
random trees, for the reference's reads, every classic bug's, reads cut short or
shuffled, wrong and odd returns and raised calls, under both cut-offs; and a candidate's
completed judgement is the full one."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.labs.tree.plans import judge_random, tree_random_plan
from reference.random_trees import random_tree
from reference.tree_bugs import buggy_calls


def _observations(tree, cutoff: str, pick: random.Random) -> list[dict]:
    """One call's observations a student's search could send for this tree's root call."""
    root = [tree.root, -float("inf"), float("inf"), True]
    plan = tree_random_plan("random 1", tree, cutoff)
    reference = plan.judge.keywords["case"]  # type: ignore[attr-defined]
    order, value = list(reference.expected_order), reference.value
    seen = [
        {"reads": order, "returned": value},
        {"reads": order, "returned": value + 1},
        {"reads": order, "returned": None},
        {"reads": order, "returned": True},
        {"reads": order, "returned": "7"},
        {"reads": order[:-1], "returned": value},
        {"reads": [*order, order[-1]], "returned": value},
        {"reads": pick.sample(order, len(order)), "returned": value},
        {"reads": [], "returned": value},
        {"reads": [*order, 3, None], "returned": value},  # not names: dropped, as the full judge drops them
        {"error": {"type": "ValueError", "message": "no"}},
    ]
    for replays in buggy_calls(cutoff).values():
        for result in replays(tree, *root):
            seen.append({"reads": list(result.trace.order), "returned": result.value})
    return seen


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), strict=st.booleans(), floats=st.booleans())
def test_a_candidates_failing_kinds_are_the_full_judgements_parts(seed: int, strict: bool, floats: bool) -> None:
    tree = random_tree(seed, values="float" if floats else "int")
    cutoff = ">" if strict else ">="
    candidate = tree_random_plan("random 1", tree, cutoff, "random 1/smaller", diagnose=False)
    case = candidate.judge.keywords["case"]  # type: ignore[attr-defined]
    for observed in _observations(tree, cutoff, random.Random(seed)):
        quick = candidate.judge([observed]).verdicts["random"]
        full = judge_random([observed], case).verdicts["random"]
        assert (quick.passed, quick.parts) == (full.passed, full.parts), observed


def test_a_candidates_completed_judgement_is_the_full_one() -> None:
    tree = random_tree(7)
    candidate = tree_random_plan("random 1", tree, ">=", "random 1/smaller", diagnose=False)
    case = candidate.judge.keywords["case"]  # type: ignore[attr-defined]
    observed = [{"reads": list(case.expected_order)[:-1], "returned": case.value + 1}]
    quick = candidate.judge(observed)
    full = judge_random(observed, case)
    assert quick.verdicts["random"].message == "" and quick.verdicts["random"].parts == ("value", "pruned")
    completed = quick.completed()
    assert completed.verdicts == full.verdicts and completed.bugs() == full.bugs()


def test_only_strictly_smaller_trees_become_candidates() -> None:
    from grader.labs.kit.smaller_trees import smaller_trees, tree_size

    for seed in range(30):
        tree = random_tree(seed)
        plan = tree_random_plan("random 1", tree)
        assert plan.shrink is not None
        sizes = [candidate.shrink.size for candidate in plan.shrink.smaller()]  # type: ignore[union-attr]
        expected = [tree_size(t) for t in smaller_trees(tree) if tree_size(t) < tree_size(tree)]
        assert sizes == expected and all(size < plan.shrink.size for size in sizes)
