"""The labs' judges are pure functions of plain observation dicts (what the sanitiser hands
them): fed by hand here, without a student process, a spec or a grading run."""

from __future__ import annotations

from math import inf

from grader.checks import Verdict
from grader.checks.bounds import BoundProbe
from grader.labs.kit.messages import NO_ANSWER, answer, mismatch, roll_up
from grader.labs.tictactoe.judges import judge_game_over
from grader.labs.tree.cases import BoundsCase, SearchCase
from grader.labs.tree.judges import judge_bounds, judge_search
from reference.tree_search import alphabeta
from reference.trees import GameTree

TREE = GameTree.from_mapping({"a": ["b", "c"], "b": ["d", "e"], "c": ["f", "g"]}, {"d": 3, "e": 5, "f": 2, "g": 9}, "a")


def observed(returned: object = None, reads: list[str] | None = None, error: dict | None = None) -> dict:
    return {"returned": returned, "error": error, "reads": reads or [], "seconds": 0.0}


def search_case() -> SearchCase:
    result = alphabeta(TREE)
    return SearchCase(TREE, result.value, result.nodes, tuple(result.trace.order), ("value", "nodes", "pruned"))


def test_tree_search_passes_the_reference_reads() -> None:
    case = search_case()
    judgement = judge_search([observed(case.value, list(case.expected_order))], case)
    assert all(v.passed for v in judgement.verdicts.values())
    assert judgement.verdicts["pruned"].details["view"] == "tree"


def test_tree_search_without_pruning_names_the_first_difference() -> None:
    case = search_case()
    everything = ["a", "b", "d", "e", "c", "f", "g"]
    judgement = judge_search([observed(case.value, everything)], case)
    assert judgement.verdicts["value"].passed and not judgement.verdicts["pruned"].passed
    assert "your search went on with g" in judgement.verdicts["pruned"].message
    assert "no_pruning" in judgement.bugs()


def test_tree_search_that_raised_fails_every_kind_alike() -> None:
    error = {"type": "ZeroDivisionError", "message": "division by zero", "frames": []}
    judgement = judge_search([observed(error=error)], search_case())
    assert {v.message for v in judgement.verdicts.values()} == {
        "alphabeta('a', -inf, inf, True) raised ZeroDivisionError: division by zero"
    }


def test_tree_bounds_report_a_call_that_breaks_the_specification() -> None:
    probe = BoundProbe("alphabeta('a', 4, inf, True)", 4, inf, 3)
    case = BoundsCase(TREE, (["a", 4, inf, True],), (probe,))
    assert judge_bounds([observed(4)], case).verdicts["bounds"].passed
    failed = judge_bounds([observed(7)], case).verdicts["bounds"]
    assert not failed.passed and "must be <= alpha = 4" in failed.message


def test_game_over_judge_reads_returned_pairs() -> None:
    pair = {"type": "tuple", "items": [True, 1]}
    assert judge_game_over(["ooo/xx./..."], [(True, 1)], [observed(pair)]).passed
    verdict = judge_game_over(["ooo/xx./..."], [(True, 1)], [observed({"type": "tuple", "items": [False, 0]})])
    assert not verdict.passed and "'o' has three in a row" in verdict.message


def test_kit_messages() -> None:
    assert answer([]) is NO_ANSWER and answer([{"returned": 1}]) == {"returned": 1}
    assert mismatch("s.yaml", 3, "cases[0].expect.value", 1, 2) == (
        "s.yaml:3: cases[0].expect.value: stored 1, the reference computes 2"
    )
    same = Verdict.fail("boom")
    rolled = roll_up({"value": same, "nodes": same, "choice": Verdict.ok("fine")}, "all right", tag_kinds=True)
    assert rolled.message == "[value, nodes] boom"
    assert roll_up({"value": Verdict.ok("x")}, "all right").message == "all right"
