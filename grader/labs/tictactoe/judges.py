"""The tic-tac-toe lab's judges: pure functions `judge_*(observed, case) -> Judgement` from the
plain observation dicts of one request (one per call) to verdicts per check kind, and the
classic bugs that reproduce them; `*_verdict` are their parts, one check each."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import cache
from typing import Any, cast

from reference.tictactoe import (
    game_over,
    parse_board,
)
from reference.tictactoe_search import (
    lab_minimax,
    position_value,
)

from ...checks import Verdict
from ...checks.bounds import BoundProbe, check_bounds
from ...checks.expansions import first_divergence
from ...checks.show import is_number, show
from ..kit import Judgement
from ..kit.messages import roll_up
from ..kit.observations import answer_at
from .boards import MARK, NOT_A_BOARD, board_of, drawn, outcome, side_by_side
from .cases import BoardCall, Expansions, Expected, GameOverBoards, Position, RandomCase, SearchCase, WindowsCase
from .hints import (
    bugs_behind_calls,
    error_text,
    game_over_bugs,
    game_over_hints,
    game_state,
    raised,
    replayed_bugs,
)

SHOWN_FAILURES = 3


def judge_game_over(observed: list[BoardCall], case: GameOverBoards) -> Judgement:
    """game_over on every board of the case."""
    bugs = cache(lambda: game_over_bugs(list(case.boards), observed, returned_pair, case.strict))
    verdict = game_over_verdict(list(case.boards), list(case.expected), observed)
    return Judgement(named({"game_over": verdict}, bugs), bugs)


def judge_search(observed: list[BoardCall], case: SearchCase) -> Judgement:
    """minimax at the case's position: score, nodes_visited, boards expanded and move."""
    bugs = cache(lambda: replayed_bugs(case.call, answer_at(observed), strict=case.expected.strict))
    expected = accepted_expectations(answer_at(observed), case.position, case.expected)
    verdicts = minimax_verdicts(answer_at(observed), case.position, expected, case.kinds)
    return Judgement(named(verdicts, bugs), bugs)


def accepted_expectations(observation: BoardCall, position: Position, expected: Expected) -> Expected:
    """What the search is judged against: the reference's expectations, or, under a strict
    cut-off, the textbook fail-hard search's boards and count when the student's search
    expanded exactly those (it answers the bound it cut on, which `>` does not cut on in
    the parent, so it reads more than the fail-soft reference; both are correct). Worked
    out only for a search that parts from the reference."""
    seen, total = expanded_boards(observation)
    if not expected.strict or total == 0 or expected.expanded.same(seen, total):
        return expected
    hard = lab_minimax(position.array(), position.player, strict=True, fail_hard=True)
    boards = Expansions.listed(position, hard.expanded, True)
    if not boards.same(seen, total):
        return expected
    return replace(expected, nodes_visited=hard.nodes_visited, expanded=boards)


def judge_bounds(observed: list[BoardCall], case: WindowsCase) -> Judgement:
    """maximize and minimize with narrowed windows against the bound specification."""
    bugs = cache(lambda: bugs_behind_calls(list(case.calls), observed, strict=case.strict))
    verdict = bounds_verdict(case.position, list(case.probes), observed)
    return Judgement(named({"bounds": verdict}, bugs), bugs)


def judge_random(observed: list[BoardCall], case: RandomCase) -> Judgement:
    """A hidden position, judged on everything at once as one `random` verdict."""
    parts = (
        judge_game_over(observed[:2], case.game_over),
        judge_search(observed[2:], case.search),
        judge_bounds(observed[3:], case.windows),
    )

    @cache
    def bugs() -> frozenset[str]:
        found = [part.bugs() for part in parts]
        return frozenset.intersection(*(f for f in found if f is not None))

    verdicts = {kind: verdict for part in parts for kind, verdict in part.verdicts.items()}
    position = case.search.position
    ok = (
        f'game_over, score, nodes_visited, expansions, choice and bounds all right on "{position.board}" '
        f"with {MARK[position.player]} to move."
    )
    # an error that fails several kinds alike is said once
    return Judgement({"random": roll_up(verdicts, ok, tag_kinds=True)}, bugs)


def named(verdicts: dict[str, Verdict], bugs: Callable[[], frozenset[str] | None]) -> dict[str, Verdict]:
    """`verdicts`, each failing one naming the classic bugs that reproduce what was observed
    (the pipeline keeps those that reproduce every case)."""
    if all(v.passed for v in verdicts.values()):
        return verdicts
    found = tuple(sorted(bugs() or ()))
    return {k: v if v.passed else replace(v, diagnoses=found) for k, v in verdicts.items()}


def game_over_verdict(boards: list[str], expected: list[tuple[bool, int]], calls: list[BoardCall]) -> Verdict:
    # (board, expected pair, the pair returned or None, the call and what came of it)
    failures: list[tuple[str, tuple[bool, int], tuple[bool, int] | None, str]] = []
    for number, (board, truth) in enumerate(zip(boards, expected)):
        observation = answer_at(calls, number)
        if observation.get("error"):
            failures.append((board, truth, None, raised(observation, "game_over(board)")))
            continue
        pair = returned_pair(observation.get("returned"))
        if pair is None or pair != truth:
            failures.append((board, truth, pair, f"game_over(board) returned {show(observation.get('returned'))}"))
    if not failures:
        return Verdict.ok(f"game_over was right on all {len(boards)} boards.")
    lines = [f"game_over was wrong on {len(failures)} of {len(boards)} boards."]
    for board, truth, _, came_back in failures[:SHOWN_FAILURES]:
        lines.append(f"{came_back}; expected ({truth[0]}, {truth[1]}): {game_state(board, truth)}.\n{drawn(board)}")
    if len(failures) > SHOWN_FAILURES:
        lines.append(
            f"... and {len(failures) - SHOWN_FAILURES} more: "
            + ", ".join(f'"{b}"' for b, *_ in failures[SHOWN_FAILURES:])
        )
    lines.extend(game_over_hints(failures))
    return Verdict.fail("\n".join(lines))


def returned_pair(returned: Any) -> tuple[bool, int] | None:
    """(finished, status) from what game_over returned, or None if it is no such pair."""
    if not (isinstance(returned, dict) and returned.get("type") in ("tuple", "list") and len(returned["items"]) == 2):
        return None
    finished, status = returned["items"]
    if not (isinstance(finished, bool) or finished in (0, 1)) or not is_number(status):
        return None
    return bool(finished), status


def minimax_verdicts(
    observation: BoardCall, position: Position, expected: Expected, kinds: tuple[str, ...]
) -> dict[str, Verdict]:
    call = position.call("minimax", position.player)
    if observation.get("error"):
        failed = Verdict.fail(f"{raised(observation, call)}\n{position.drawing()}")
        return {kind: failed for kind in kinds}
    if "points" not in observation:
        returned = observation.get("returned")
        why = (
            "does minimax end with `return choice, score, nodes_visited`?"
            if returned is None
            else "it must return three things: (choice, score, nodes_visited)."
        )
        failed = Verdict.fail(f"{call} returned {show(returned)}: {why}\n{position.drawing()}")
        return {kind: failed for kind in kinds}
    judges: dict[str, Callable[[], Verdict]] = {
        "value": lambda: value_verdict(observation, position, expected, call),
        "nodes": lambda: nodes_verdict(observation, position, expected, call),
        "pruned": lambda: pruned_verdict(observation, position, expected, call),
        "choice": lambda: choice_verdict(observation, position, expected, call),
    }
    return {kind: judges[kind]() for kind in kinds}


def value_verdict(observation: BoardCall, position: Position, expected: Expected, call: str) -> Verdict:
    points = observation.get("points")
    if is_number(points) and points == expected.points:
        return Verdict.ok(f"{call} returned score {show(points)}, as expected.")
    return Verdict.fail(
        f"{call} returned score {show(points)}, expected {expected.points}: "
        f"{outcome(expected.points, position.player)}.\n{position.drawing()}"
    )


def nodes_verdict(observation: BoardCall, position: Position, expected: Expected, call: str) -> Verdict:
    nodes = observation.get("nodes")
    if is_number(nodes) and nodes == expected.nodes_visited:
        return Verdict.ok(f"{call} returned nodes_visited = {expected.nodes_visited:,}, as expected.")
    if not is_number(nodes):
        return Verdict.fail(
            f"{call} returned nodes_visited = {show(nodes)}, expected the number "
            f"{expected.nodes_visited:,}.\n{position.drawing()}"
        )
    nodes = cast(float, nodes)  # is_number() said so
    more = "more" if nodes > expected.nodes_visited else "fewer"
    lines = [
        f"{call} returned nodes_visited = {nodes:,}; the reference counts {expected.nodes_visited:,} "
        f"({abs(nodes - expected.nodes_visited):,} {more})."
    ]
    seen, total = expanded_boards(observation)
    finished_boards = expected.nodes_visited - (expected.expanded.count - 1)
    if total == 0:
        lines.append("(The grader could not watch your search: it never called get_childs.)")
    elif not expected.expanded.same(seen, total):
        lines.append(
            "Your search expands other boards than the reference (see the pruned check); "
            "the count follows once the search does."
        )
    elif nodes == finished_boards:
        lines.append(
            f"Your search expanded the same boards as the reference, and {nodes:,} is the number of "
            f"finished boards it reached: count every child, not only finished boards "
            f"(nodes_visited = nodes_visited + 1 just before each recursive call)."
        )
    else:
        lines.append(
            "Your search expanded the same boards as the reference, so the count itself is off: add 1 "
            "for every child just before its recursive call, and carry the count the call returns "
            "(`_, utility, nodes_visited = minimize(...)`)."
        )
        if nodes > expected.nodes_visited:
            lines.append(
                "If your first search counts right and later ones too many, the count outlives the call "
                "(a global counter never reset): count in the nodes_visited argument, which minimax starts at 0."
            )
    lines.append(position.drawing())
    return Verdict.fail("\n".join(lines))


def expanded_boards(observation: BoardCall) -> tuple[list[str], int]:
    seen = observation.get("expanded")
    seen = [s for s in seen if isinstance(s, str)] if isinstance(seen, list) else []
    total = observation.get("expansions")
    return seen, total if isinstance(total, int) else len(seen)


def pruned_verdict(observation: BoardCall, position: Position, expected: Expected, call: str) -> Verdict:
    seen, total = expanded_boards(observation)
    reference = expected.expanded
    if reference.same(seen, total):
        return Verdict.ok(
            f"your search called get_childs on the same {total:,} boards, in the same order, as the reference."
        )
    if total == 0:
        return Verdict.fail(
            f"During {call} your code never called get_childs, so the grader can't see which boards "
            f"your search expands (the reference expands {reference.count:,}). maximize and "
            f"minimize must get the children with `childs = get_childs(matrix, active_turn)` "
            f"(the given helper or your own version of it).\n{position.drawing()}"
        )
    full = reference.full()
    compared = full[: len(seen)] if total > len(seen) else full  # a very long trace is kept only in part
    index = first_divergence(seen, compared)
    more = "more" if total > reference.count else "fewer"
    lines = [
        f"During {call} your search called get_childs on {total:,} boards; the reference on "
        f"{reference.count:,}"
        + (
            f" ({abs(total - reference.count):,} {more})."
            if total != reference.count
            else ", but not the same ones in the same order."
        )
    ]
    if index is not None and index < len(seen) and index < len(full):
        lines.append(f"The first {index:,} expansions agree; expansion #{index + 1:,} differs:")
        lines.append(side_by_side(("your search expands", seen[index]), ("the reference expands", full[index])))
        if seen[index] not in set(full):
            lines.append("The reference never expands the board on the left: it cuts the search off before.")
        if full[index] not in set(seen):
            lines.append("Your search never expands the board on the right.")
    elif index is not None and index >= len(seen):
        lines.append(f"Your search stopped after {len(seen):,} expansions; the reference goes on with:")
        lines.append(drawn(full[index]))
    elif index is not None:
        lines.append(f"After the reference's last expansion, your search went on with:\n{drawn(seen[index])}")
    finished = next((label for label in seen if (board := board_of(label)) is not None and game_over(board)[0]), None)
    hint = ""
    if finished is not None:
        state = game_state(finished, game_over(parse_board(finished)))
        lines.append(
            f"Your search asked for the children of a finished board ({state}):\n{drawn(finished)}\n"
            f"maximize and minimize must return at once on a board where game_over says the game is "
            f"finished."
        )
    elif total > reference.count:
        hint = (
            f"Your search prunes less than the reference: stop the loop as soon as {cutoff_rule(reference.strict)}, "
            "and raise alpha (lower beta) whenever the best utility improves it."
        )
    elif total < reference.count:
        hint = (
            "Your search skips boards the reference expands: go through every child in the order "
            f"get_childs gives, cut off only when {cutoff_rule(reference.strict)}, and treat "
            "only boards where someone has won or no cell is empty as finished."
        )
    lines.append(position.drawing())
    # enough for the picture: the last expansion in common and the first that differs
    # (`offset` before them left out); the totals are the whole searches' counts
    cut = len(seen) if index is None else index + 1
    start = cut if index is None else max(index - 1, 0)
    details = {
        "view": "boards",
        "board": position.board,
        "offset": start,
        "seen": seen[start:cut],
        "expected": full[start:cut],
        "seen_total": total,
        "expected_total": reference.count,
    }
    return Verdict.fail("\n".join(lines), hint=hint).with_details(details)


def choice_verdict(observation: BoardCall, position: Position, expected: Expected, call: str) -> Verdict:
    choice = observation.get("choice")
    if not (choice is None or isinstance(choice, str)):
        choice = f"{NOT_A_BOARD}{show(choice)}"
    optimal = sorted(expected.moves)
    hint = ""
    if choice in expected.moves:
        return Verdict.ok(
            f"{call} chose an optimal move ({len(optimal)} of {len(position.children())} moves are optimal)."
        )
    if choice is None:
        text = (
            f"{call} returned choice = None: minimax must return the board after its move "
            f"(the child kept when its utility was the best so far)."
        )
    elif choice.startswith(NOT_A_BOARD):
        text = f"{call} returned a choice that is {choice[1:]}, not a board: it must be one of the children."
    elif choice not in position.children():
        text = (
            f"{call} returned a choice that is not one move of {MARK[position.player]} away from the board:"
            f"\n{drawn(choice)}"
        )
    else:
        worth = position_value(parse_board(choice), -position.player, position.player, 1)
        slower = " (a win too, but a slower one)" if 0 < worth < expected.points else ""
        more = f" (the first of {len(optimal)} optimal moves)" if len(optimal) > 1 else ""
        text = (
            f"{call} chose a move worth {worth}{slower}; the position is worth {expected.points} "
            f"({outcome(expected.points, position.player)}), so that move is not optimal.\n"
            + side_by_side(("your move", choice), (f"an optimal move{more}", optimal[0]))
        )
        if observation.get("points") == expected.points:
            hint = (
                "Your score is right, so most likely the choice changed on a child that only tied the "
                "best so far: under pruning such a tie may be only a bound, so change choice only on a "
                "strict improvement (utility > maxUtility)."
            )
        else:
            text += "\nYour score is wrong too (see the value check): the move follows from the utilities."
    return Verdict.fail(f"{text}\n{position.drawing()}", hint=hint)


def bounds_verdict(position: Position, probes: list[BoundProbe], calls: list[BoardCall]) -> Verdict:
    results: list[tuple[BoundProbe, Any, str | None]] = []
    for probe, observation in zip(probes, calls):
        if observation.get("error"):
            results.append((probe, None, f"raised {error_text(observation)}"))
        elif "points" not in observation:
            results.append(
                (probe, None, f"returned {show(observation.get('returned'))}, not (choice, utility, nodes_visited)")
            )
        else:
            results.append((probe, observation["points"], None))
    if len(calls) < len(probes):
        results.append((probes[len(calls)], None, "got no answer: the calls stopped early"))
    verdict = check_bounds(results)
    if verdict.passed:
        return verdict
    depth_note = (
        ""
        if any(error for _, _, error in results)
        else "\n(depth counts the moves made before this board: a win k moves later scores "
        "10 - (depth + k) for `player`, a loss (depth + k) - 10.)"
    )
    return Verdict.fail(f"{verdict.message}{depth_note}\n{position.drawing()}")


def cutoff_rule(strict: bool) -> str:
    """The course's cut-off test in the skeleton's words (spec.Conventions)."""
    return "maxUtility > beta (minUtility < alpha)" if strict else "maxUtility >= beta (minUtility <= alpha)"
