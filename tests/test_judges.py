"""The labs' judges are pure functions of plain observation dicts (what the sanitiser hands
them): fed by hand here, without a student process, a spec or a grading run."""

from __future__ import annotations

from math import inf

from grader.checks import Verdict
from grader.checks.bounds import BoundProbe
from grader.labs.kit.messages import NO_ANSWER, answer, mismatch, roll_up
from grader.labs.negamax import judges as negamax_judges
from grader.labs.negamax.cases import MoveCase
from grader.labs.negamax.cases import Position as NegamaxPosition
from grader.labs.negamax.cases import RandomCase as NegamaxRandomCase
from grader.labs.negamax.cases import SearchCase as NegamaxSearchCase
from grader.labs.negamax.plans import windows_case as negamax_windows_case
from grader.labs.tictactoe import judges as tictactoe_judges
from grader.labs.tictactoe.cases import MINIMAX_KINDS, GameOverBoards, RandomCase, WindowsCase, reference_expectations
from grader.labs.tictactoe.cases import Position as TicTacToePosition
from grader.labs.tictactoe.cases import SearchCase as TicTacToeSearchCase
from grader.labs.tictactoe.plans import minimax_call, windows_case
from grader.labs.tree.cases import BoundsCase, SearchCase
from grader.labs.tree.judges import judge_bounds, judge_search
from grader.labs.tree.plans import tree_random_plan
from reference.games import load_game
from reference.negamax import alphabeta_value
from reference.tictactoe_bugs import LAB_RULES, Rules, replay
from reference.tree_search import alphabeta, minimax
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


def test_a_tree_shrink_candidate_puts_its_diagnoses_off_and_completes_to_the_full_judgement() -> None:
    """A smaller tree's judge (a shrink candidate's) replays no classic bug and says only
    which checks fail (all shrinking asks); `complete` gives exactly what the random case's
    own judge gives, message, picture and diagnoses."""
    unpruned = minimax(TREE)
    seen = [observed(unpruned.value, list(unpruned.trace.order))]
    full = tree_random_plan("random 1", TREE).judge(seen)
    candidate = tree_random_plan("random 1", TREE, request_id="random 1/smaller", diagnose=False)
    put_off = candidate.judge(seen)
    assert full.verdicts["random"].diagnoses and "no_pruning" in full.bugs()
    assert put_off.verdicts["random"].diagnoses == () and put_off.complete is not None
    quick = put_off.verdicts["random"]
    assert (quick.passed, quick.parts, quick.message) == (False, full.verdicts["random"].parts, "")
    completed = put_off.completed()
    assert completed.verdicts == full.verdicts and completed.bugs() == full.bugs()
    assert full.completed() is full


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


# --- tictactoe: judge_*(observed, case) -----------------------------------------------------

NEAR_END = TicTacToePosition(".xx/.oo/xox", 1)  # 'o' wins at once: 3 nodes, 2 boards expanded


def board_observation(choice: str | None, points: object, nodes: object, expanded: list[str]) -> dict:
    """What the tic-tac-toe observer sends for a traced maximize/minimize/minimax call."""
    return {
        "error": None,
        "seconds": 0.0,
        "choice": choice,
        "points": points,
        "nodes": nodes,
        "expansions": len(expanded),
        "expanded": expanded,
    }


def tictactoe_search_case() -> TicTacToeSearchCase:
    position = NEAR_END
    return TicTacToeSearchCase(position, reference_expectations(position), MINIMAX_KINDS, minimax_call(position))


def test_tictactoe_game_over_reads_returned_pairs() -> None:
    case = GameOverBoards(("ooo/xx./...", "oxo/oxo/xox"), ((True, 1), (True, 0)))
    pairs = [{"type": "tuple", "items": [True, 1]}, {"type": "tuple", "items": [True, 0]}]
    assert tictactoe_judges.judge_game_over([observed(p) for p in pairs], case).verdicts["game_over"].passed
    pairs[1] = {"type": "tuple", "items": [False, 0]}
    judgement = tictactoe_judges.judge_game_over([observed(p) for p in pairs], case)
    verdict = judgement.verdicts["game_over"]
    assert not verdict.passed and "A full board ends the game too" in verdict.message
    assert verdict.diagnoses == ("draw_not_detected",) and judgement.bugs() == {"draw_not_detected"}


def test_tictactoe_search_passes_the_reference_search() -> None:
    case = tictactoe_search_case()
    truth = case.expected
    seen = board_observation(".xx/ooo/xox", truth.points, truth.nodes_visited, list(truth.expanded.full()))
    judgement = tictactoe_judges.judge_search([seen], case)
    assert set(judgement.verdicts) == set(MINIMAX_KINDS) and all(v.passed for v in judgement.verdicts.values())


def test_tictactoe_search_that_counts_leaves_fails_nodes_and_names_the_bug() -> None:
    case = tictactoe_search_case()
    truth = case.expected
    leaves = replay(Rules(count_leaves=True), "minimax", NEAR_END.board, [1])
    seen = board_observation(leaves.choice, leaves.points, leaves.nodes_visited, leaves.expanded)
    judgement = tictactoe_judges.judge_search([seen], case)
    assert [k for k, v in judgement.verdicts.items() if not v.passed] == ["nodes"]
    assert "is the number of finished boards it reached" in judgement.verdicts["nodes"].message
    assert judgement.verdicts["nodes"].diagnoses == ("counts_leaves",)
    assert leaves.nodes_visited != truth.nodes_visited


def test_tictactoe_search_that_raised_names_no_bug() -> None:
    error = {"type": "TypeError", "message": "boom", "frames": []}
    judgement = tictactoe_judges.judge_search([observed(error=error)], tictactoe_search_case())
    assert not any(v.passed for v in judgement.verdicts.values())
    assert judgement.bugs() == frozenset() and not any(v.diagnoses for v in judgement.verdicts.values())


def tictactoe_windows(answers: dict[str, int] | None = None) -> tuple[WindowsCase, list[dict]]:
    """The bounds case at NEAR_END, and observations of the lab's own search there."""
    case = windows_case(NEAR_END, reference_expectations(NEAR_END).bound_values)
    seen = []
    for call in case.calls:
        result = replay(LAB_RULES, call["function"], call["board"], call["args"])
        seen.append(board_observation(result.choice, result.points, result.nodes_visited, result.expanded))
    return case, seen


def test_tictactoe_bounds_pass_the_labs_own_search() -> None:
    case, seen = tictactoe_windows()
    judgement = tictactoe_judges.judge_bounds(seen, case)
    assert judgement.verdicts["bounds"].passed
    # the course's own reads: the narrowed windows say nothing of any bug (tie_last and
    # alpha_beta_zero read alike there), so they leave the diagnosis to the other cases
    assert judgement.bugs() is None


def test_tictactoe_bounds_report_a_value_beyond_the_window() -> None:
    case, seen = tictactoe_windows()
    probe = case.probes[2]  # (v - 1, v): the exact value v is required
    seen[2] = {**seen[2], "points": probe.true_value + 5}
    verdict = tictactoe_judges.judge_bounds(seen, case).verdicts["bounds"]
    assert not verdict.passed and probe.call in verdict.message


def test_tictactoe_random_rolls_every_kind_into_one_verdict() -> None:
    search = tictactoe_search_case()
    windows, seen = tictactoe_windows()
    finished = ".xx/ooo/xox"
    case = RandomCase(GameOverBoards((NEAR_END.board, finished), ((False, 0), (True, 1))), search, windows)
    truth = search.expected
    game_overs = [observed({"type": "tuple", "items": [False, 0]}), observed({"type": "tuple", "items": [True, 1]})]
    good = board_observation(finished, truth.points, truth.nodes_visited, list(truth.expanded.full()))
    assert tictactoe_judges.judge_random([*game_overs, good, *seen], case).verdicts["random"].passed
    wrong = {**good, "points": 0}
    verdict = tictactoe_judges.judge_random([*game_overs, wrong, *seen], case).verdicts["random"]
    assert not verdict.passed and verdict.message.startswith("[value] ")


# --- negamax: judge_*(observed, case) -------------------------------------------------------

NIM = load_game("nim", heaps=[1, 2])  # player 0 wins by taking one from the second heap
NIM_START = NegamaxPosition(NIM, NIM.start, 0)


def nim_value_case() -> NegamaxSearchCase:
    search = alphabeta_value(NIM, NIM.start, 0)
    return NegamaxSearchCase(NIM_START, (), ("value", "nodes"), 1, search.calls, search.next_states_calls)


def value_observation(returned: object, counter: object, expanded: list) -> dict:
    """What the negamax observer sends for a traced `value` call."""
    return {
        "returned": returned,
        "error": None,
        "seconds": 0.0,
        "counter": counter,
        "expansions": len(expanded),
        "expanded": expanded,
    }


def test_negamax_value_passes_the_reference_search() -> None:
    case, search = nim_value_case(), alphabeta_value(NIM, NIM.start, 0)
    judgement = negamax_judges.judge_search([value_observation(1, case.calls, list(search.trace))], case)
    assert all(v.passed for v in judgement.verdicts.values()), judgement.verdicts


def test_negamax_counter_never_incremented_fails_nodes_only() -> None:
    case, search = nim_value_case(), alphabeta_value(NIM, NIM.start, 0)
    judgement = negamax_judges.judge_search([value_observation(1, 0, list(search.trace))], case)
    assert judgement.verdicts["value"].passed and not judgement.verdicts["nodes"].passed
    assert "num_value_call is still 0" in judgement.verdicts["nodes"].message


def test_negamax_search_answered_without_searching_is_told_about_remembered_results() -> None:
    """A table kept between calls answers a state without one call of next_states."""
    case = nim_value_case()
    verdict = negamax_judges.judge_search([value_observation(1, 1, [])], case).verdicts["nodes"]
    assert not verdict.passed and "It answered without searching: from results remembered" in verdict.message


def test_negamax_move_passes_an_optimal_move_only() -> None:
    optimal = NIM.encode(((1, 1), 1))
    case = MoveCase(NIM_START, 1, (optimal,))
    good = {**observed({"type": "tuple"}), "move": {"value": 1, "state": optimal}}
    assert negamax_judges.judge_move([good], case).verdicts["choice"].passed
    losing = {**good, "move": {"value": 1, "state": NIM.encode(((0, 2), 1))}}
    verdict = negamax_judges.judge_move([losing], case).verdicts["choice"]
    assert not verdict.passed and "it is not optimal" in verdict.message


def test_negamax_bounds_report_a_call_that_breaks_the_specification() -> None:
    calls, case = negamax_windows_case([NIM_START], [1])
    true_values = [p.true_value for p, _ in case.probes]
    passing = [observed(min(max(v, p.alpha), p.beta)) for v, (p, _) in zip(true_values, case.probes)]
    assert len(calls) == len(case.probes) and negamax_judges.judge_bounds(passing, case).verdicts["bounds"].passed
    failing = [observed(-1) for _ in case.probes]
    verdict = negamax_judges.judge_bounds(failing, case).verdicts["bounds"]
    assert not verdict.passed and "broke the bound specification" in verdict.message


def test_negamax_random_rolls_every_kind_into_one_verdict() -> None:
    _, windows = negamax_windows_case([NIM_START], [1])
    case = NegamaxRandomCase(NIM_START, 1, windows)
    search = alphabeta_value(NIM, NIM.start, 0)
    optimal = NIM.encode(((1, 1), 1))
    seen = [
        value_observation(1, search.calls, list(search.trace)),
        {**observed({"type": "tuple"}), "move": {"value": 1, "state": optimal}},
        *[observed(min(max(1, p.alpha), p.beta)) for p, _ in windows.probes],
    ]
    assert negamax_judges.judge_random(seen, case).verdicts["random"].passed
    seen[0] = {**seen[0], "returned": -1}
    assert not negamax_judges.judge_random(seen, case).verdicts["random"].passed


def test_kit_messages() -> None:
    assert answer([]) is NO_ANSWER and answer([{"returned": 1}]) == {"returned": 1}
    assert mismatch("s.yaml", 3, "cases[0].expect.value", 1, 2) == (
        "s.yaml:3: cases[0].expect.value: stored 1, the reference computes 2"
    )
    same = Verdict.fail("boom")
    rolled = roll_up({"value": same, "nodes": same, "choice": Verdict.ok("fine")}, "all right", tag_kinds=True)
    assert rolled.message == "[value, nodes] boom"
    assert roll_up({"value": Verdict.ok("x")}, "all right").message == "all right"
