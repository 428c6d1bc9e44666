"""The negamax lab's judges: pure functions `judge_*(observed, case) -> Judgement` from the
plain observation dicts of one request (one per call) to verdicts per check kind;
`*_verdict` are their parts, one check each."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from math import inf
from typing import Any

from reference.negamax import Game, alphabeta_value, optimal_successors, true_value

from ...checks import Verdict
from ...checks.bounds import BoundProbe, check_bounds, meets_bound
from ...checks.expansions import first_divergence
from ...checks.show import describe_error, is_number, show
from ...checks.value import check_value
from ..kit import Judgement
from ..kit.messages import roll_up
from ..kit.observations import answer_at
from .cases import TRACE_LIMIT, Counts, MoveCase, Position, RandomCase, SearchCase, StateCall, WindowsCase
from .describe import OUTCOMES, counted, difference, drawn, game_line, game_name, one_line
from .hints import count_hint, cutoff_rule, sign_error
from .picture import move_details, position_details, search_details

SHOWN_FAILURES = 5


def judge_search(observed: list[StateCall], case: SearchCase) -> Judgement:
    """The measured `value` call: its value and its counts (num_value_call, next_states)."""
    position, window = case.position, case.window
    call_text = position.call("value", *window)
    seen = answer_at(observed)
    hint = once(lambda: sign_error(seen, position, window))
    verdicts = {}
    picture = position_details(position)
    if "value" in case.kinds:
        verdicts["value"] = value_verdict(seen, case.value, position, call_text, hint)
    if "nodes" in case.kinds:
        search = alphabeta_value(position.game, position.state, position.player, *window, strict=position.strict)
        counts = accepted_counts(seen, Counts(case.calls, case.expansions, search.trace), position, window)
        verdicts["nodes"] = nodes_verdict(seen, counts, position, call_text, hint)
        picture = traced_picture(seen, counts, position, verdicts["nodes"].passed)
    return Judgement(
        {k: pictured(with_game(v, position.game), picture, k == "nodes") for k, v in verdicts.items()}, hint
    )


def accepted_counts(seen: StateCall, counts: Counts, position: Position, window: tuple = ()) -> Counts:
    """The counts the student's search is judged against: the reference's, or, under a
    strict cut-off, the textbook fail-soft search's (the best value starting below every
    result instead of at alpha) when the student's next_states calls are exactly that
    search's. The course's code answers alpha when nothing beats it, the bound itself,
    which `val > beta` does not cut on in the parent; a value below it does. Both are
    correct (under `val >= beta` they read the same states). Worked out only for a search
    that parts from the reference."""
    expanded, total = seen.get("expanded"), seen.get("expansions")
    if not position.strict or not isinstance(expanded, list) or not isinstance(total, int):
        return counts

    def matches(other: Counts) -> bool:  # the same value calls and next_states calls
        same_calls = seen.get("counter") == other.calls and total == other.expansions
        return same_calls and first_divergence_text(position.game, expanded, total, other.trace) is None

    if matches(counts):
        return counts
    soft = alphabeta_value(position.game, position.state, position.player, *window, start=-inf, strict=True)
    textbook = Counts(soft.calls, soft.next_states_calls, soft.trace)
    return textbook if matches(textbook) else counts


def traced_picture(seen: StateCall, counts: Counts, position: Position, same: bool) -> dict:
    """The states each search expanded, drawn (up to the first difference; nothing but the
    position when they are the same)."""
    expanded = seen.get("expanded")
    states = expanded if isinstance(expanded, list) and not same else []
    total = seen.get("expansions")
    total = total if isinstance(total, int) and not isinstance(total, bool) else len(states)
    reference = list(counts.trace) if not same or position.game.name == "tree" else []
    if same and position.game.name == "tree":
        states = reference
    return search_details(position, states, reference, (total, counts.expansions))


def pictured(verdict: Verdict, picture: dict | None, always: bool = False) -> Verdict:
    """A failed verdict (`always`: any) with the report's picture."""
    return verdict.with_details(picture) if picture and (always or not verdict.passed) else verdict


def judge_move(observed: list[StateCall], case: MoveCase) -> Judgement:
    """`best_move`: an optimal successor and the position's value."""
    position = case.position
    verdict = choice_verdict(answer_at(observed), position, case.value, list(case.moves), position.call("best_move"))
    return Judgement({"choice": with_game(verdict, position.game)})


def choice_picture(observed: StateCall, position: Position, optimal: list) -> dict | None:
    """A move that is one of the position's but not optimal, next to an optimal one; else the position."""
    move = observed.get("move")
    chosen = move.get("state") if isinstance(move, dict) else None
    successors = [position.game.encode(s) for s in position.successors()]
    if chosen in successors and chosen not in optimal:
        return move_details(position, chosen, optimal)
    return position_details(position)


def judge_bounds(observed: list[StateCall], case: WindowsCase) -> Judgement:
    """Every `alphaBeta` call with a narrowed window against the bound specification."""
    return Judgement({"bounds": with_game(bounds_verdict(list(case.probes), observed), case.game)})


def bounds_picture(probes: list[tuple[BoundProbe, Position]], observed: list[StateCall]) -> dict | None:
    """The position of the first call that broke the bound specification."""
    for index, (probe, position) in enumerate(probes):
        call = answer_at(observed, index)
        if call.get("error") or not meets_bound(call.get("returned"), probe):
            return position_details(position)
    return None


def judge_random(observed: list[StateCall], case: RandomCase) -> Judgement:
    """A hidden position, judged like the fixed cases together as one `random` verdict."""
    position, value = case.position, case.value
    game = position.game
    search = alphabeta_value(game, position.state, position.player, strict=position.strict)
    counts = accepted_counts(
        answer_at(observed), Counts(search.calls, search.next_states_calls, search.trace), position
    )
    optimal = [game.encode(s) for s in optimal_successors(game, position.state, position.player)]
    value_call = position.call("value")
    hint = once(lambda: sign_error(answer_at(observed), position))
    verdicts = {
        "value": value_verdict(answer_at(observed), value, position, value_call, hint),
        "nodes": nodes_verdict(answer_at(observed), counts, position, value_call, hint),
        "choice": choice_verdict(answer_at(observed, 1), position, value, optimal, position.call("best_move")),
        "bounds": bounds_verdict(list(case.windows.probes), observed[2:]),
    }
    if not verdicts["nodes"].passed or not verdicts["value"].passed:
        drawn = traced_picture(answer_at(observed), counts, position, verdicts["nodes"].passed)
        verdicts = {k: pictured(v, drawn) if k in ("value", "nodes") else v for k, v in verdicts.items()}
    ok = (
        f"value, num_value_call, next_states calls, best_move and the bound specification all right at "
        f"{position.text} ({game_name(game)})."
    )
    suffix = game_line(game) or f"\nThe game: {game_name(game)}."
    return Judgement({"random": roll_up(verdicts, ok, suffix=suffix)}, hint)  # an error fails all alike: said once


def raised(observed: StateCall, call: str, position: Position) -> Verdict:
    verdict = Verdict.fail(f"{call} raised {describe_error(observed.get('error') or {})}\n{position.drawing()}")
    return pictured(verdict, position_details(position))


def with_game(verdict: Verdict, game: Game) -> Verdict:
    return verdict if verdict.passed else replace(verdict, message=verdict.message + game_line(game))


def once(compute: Callable[[], frozenset[str]]) -> Callable[[], frozenset[str]]:
    """`compute`, run at most once (value and nodes share one replay)."""
    return functools.cache(compute)


def value_verdict(
    observed: StateCall,
    expected: int,
    position: Position,
    call: str,
    sign_bugs: Callable[[], frozenset[str]] | None = None,
) -> Verdict:
    """`sign_bugs`: worked out only when the value is wrong (see sign_error); named as
    diagnoses, so the hint shows only when the error explains every case."""
    if observed.get("error"):
        return raised(observed, call, position)
    verdict = check_value(observed.get("returned"), expected, call)
    if verdict.passed:
        return verdict
    meaning = f"Player {position.player} {OUTCOMES.get(expected, 'gets this value')} from here."
    bugs = tuple(sorted(sign_bugs())) if sign_bugs else ()
    return replace(verdict, message=f"{verdict.message} {meaning}\n{position.drawing()}", diagnoses=bugs)


def nodes_verdict(
    observed: StateCall,
    expected: Counts,
    position: Position,
    call: str,
    sign_bugs: Callable[[], frozenset[str]] | None = None,
) -> Verdict:
    """`num_value_call` against the reference's count, and the states `next_states` was
    called on against the reference's, each reported on its own. When a sign error reads
    exactly these states (`sign_bugs`), the hint about pruning and order would mislead: the
    sign error is named as a diagnosis, and the pipeline leaves the hint out."""
    if observed.get("error"):
        return raised(observed, call, position)
    counter_ok, counter_line = counter_check(observed.get("counter"), expected.calls, call)
    seen = observed.get("expanded")
    seen = seen if isinstance(seen, list) else []
    expansions = observed.get("expansions")
    expansions = expansions if isinstance(expansions, int) else len(seen)
    if len(seen) != min(max(expansions, 0), TRACE_LIMIT):
        # the observer keeps every call up to the limit: a shorter record would be compared only
        # as far as it goes, so a count alone (the student's process's number) would pass
        return Verdict.fail(
            f"{call}: the record of next_states calls holds {len(seen):,} states for {expansions:,} calls; "
            f"the grader's observer keeps every one of the first {TRACE_LIMIT:,}. Was it tampered with?\n"
            f"{position.drawing()}"
        )
    divergence = first_divergence_text(position.game, seen, expansions, expected.trace)
    if divergence is None and expansions == expected.expansions:
        states_line = (
            "next_states was never called, as in the reference."
            if expansions == 0
            else f"next_states was called {counted(expansions, 'time')}, on the same states in the same "
            f"order as in the reference."
        )
        if counter_ok:
            return Verdict.ok(f"{counter_line} {states_line}")
        hint = count_hint(observed.get("counter"), expected.calls, position.strict)
        return Verdict.fail(f"{counter_line}\n{states_line}", hint=hint)
    off = f" ({difference(expansions, expected.expansions)})" if expansions != expected.expansions else ""
    states_line = (
        f"next_states was called {counted(expansions, 'time')}; the reference calls it "
        f"{counted(expected.expansions, 'time')}{off}."
    )
    if expansions > expected.expansions:
        hint = (
            f"Your search prunes less than the reference: return as soon as {cutoff_rule(position.strict)}, "
            "raise alpha to val "
            "after each successor, and pass the window negated and swapped: "
            "value(ns, other(player), -beta, -alpha)."
        )
    else:
        hint = (
            "Your search skips or reorders states the reference searches: go through next_states(State, player) "
            f"in order, cut off only when {cutoff_rule(position.strict)}, pass the window negated and swapped: "
            "value(ns, other(player), -beta, -alpha), and return utility(State, player) at a finished state."
        )
    bugs = tuple(sorted(sign_bugs())) if sign_bugs else ()
    if counter_ok:  # the count alone is right: say so without calling the check passed
        counter_line = (
            f"{call} called value {counted(expected.calls, 'time')}, the reference's count, but did not "
            f"search the reference's states:"
        )
    lines = [counter_line, states_line, divergence or "", position.drawing()]
    return Verdict.fail("\n".join(line for line in lines if line), bugs, hint)


def counter_check(counter: Any, expected: int, call: str) -> tuple[bool, str]:
    if not is_number(counter):
        return False, (
            f"After {call}, num_value_call is {show(counter)}, not a number: value must count "
            f"its calls in it ({expected:,} here)."
        )
    if counter == expected:
        return True, f"{call} called value {counted(expected, 'time')}, as expected."
    if counter == 0:
        return False, (
            f"After {call}, num_value_call is still 0: value never incremented it. The reference's "
            f"value is called {counted(expected, 'time')} here. Begin value with "
            f"`global num_value_call` and `num_value_call += 1`."
        )
    return False, (
        f"After {call}, num_value_call is {counter:,}; the reference's value is called "
        f"{counted(expected, 'time')} ({difference(int(counter), expected)})."
    )


# A search that answers an unfinished state without one call of next_states answered from memory.
REMEMBERED = (
    " It answered without searching: from results remembered from an earlier call? This lab counts "
    "the calls of a plain alpha-beta search, so a table kept between calls (a dict of results, "
    "functools.lru_cache) costs the nodes check, and across games it answers one game's states with "
    "another's values (the grader plays several games whose states look alike)."
)


def first_divergence_text(game: Game, seen: list, expansions: int, expected: tuple) -> str | None:
    """Where the student's calls of `next_states` first part from the reference's, or None.
    The observer keeps a prefix of very long traces; then only that prefix is compared."""
    reference = list(expected)
    if expansions > len(seen):
        reference = reference[: len(seen)]
    index = first_divergence(seen, reference)
    if index is None:
        return None
    if index < len(seen) and index < len(reference):
        return (
            f"First difference at next_states call #{index + 1}: yours was on {one_line(game, seen[index])}, "
            f"the reference's on {one_line(game, reference[index])}."
        )
    if index >= len(seen):
        text = (
            f"Your search stopped after {counted(len(seen), 'call')} of next_states; the reference goes on "
            f"with {one_line(game, reference[index])}."
        )
        return text + (REMEMBERED if not seen else "")
    return f"After the reference's last call of next_states, your search went on with {one_line(game, seen[index])}."


def choice_verdict(observed: StateCall, position: Position, expected: int, optimal: list, call: str) -> Verdict:
    """Any optimal successor passes, with the position's value next to it."""
    if observed.get("error"):
        return raised(observed, call, position)
    returned, move = observed.get("returned"), observed.get("move")
    if not isinstance(move, dict):
        return Verdict.fail(
            f"{call} returned {show(returned)}; it must return a pair (value, next_state).\n{position.drawing()}"
        )
    game = position.game
    successors = [game.encode(s) for s in position.successors()]
    problems = []
    if move.get("state") not in successors:
        problems.append(
            f"Its second item is not one of the {len(successors)} states "
            f"next_states({position.text}, {position.player}) returns."
        )
    elif move["state"] not in optimal:
        chosen = game.decode(move["state"])
        worth = -true_value(game, chosen, game.other(position.player))
        best = game.decode(optimal[0])
        more = f" (the first of {len(optimal)} optimal moves)" if len(optimal) > 1 else ""
        problems.append(
            f"That move is worth {worth} to player {position.player}, but the state is worth "
            f"{expected}: it is not optimal. Your move leads to:{drawn(game.describe(chosen))}\n"
            f"An optimal move{more} leads to:{drawn(game.describe(best))}"
        )
    if not (is_number(move.get("value")) and move["value"] == expected):
        problems.append(
            f"Its value is {show(move.get('value'))}, but the state is worth {expected} to player {position.player}."
        )
    if problems:
        verdict = Verdict.fail(f"{call} returned {show(returned)}.\n" + "\n".join(problems) + f"\n{position.drawing()}")
        return pictured(verdict, choice_picture(observed, position, optimal))
    return Verdict.ok(
        f"{call} returned the value {expected} and an optimal move "
        f"({len(optimal)} of the {len(successors)} moves are optimal)."
    )


def bounds_verdict(probes: list[tuple[BoundProbe, Position]], observed: list[StateCall]) -> Verdict:
    """Every call against the bound specification; failures are listed with their state."""
    results: list[tuple[BoundProbe, Any, str | None]] = []
    for (probe, _), call in zip(probes, observed):
        error = f"raised {describe_error(call.get('error') or {})}" if call.get("error") else None
        results.append((probe, call.get("returned"), error))
    if len(observed) < len(probes):
        results.append((probes[len(observed)][0], None, "got no answer: an earlier call ended the process"))
    verdict = check_bounds(
        results, function="alphaBeta", shown=SHOWN_FAILURES, describe=lambda index: probes[index][1].drawing()
    )
    return pictured(verdict, bounds_picture(probes, observed))
