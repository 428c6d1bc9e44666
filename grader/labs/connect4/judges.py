"""The connect4 lab's judges: pure functions from the observer's plain data to verdicts."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

from reference.connect4_search import (
    ACCEPTED,
    BUGS,
    FLAG_SPELLINGS,
    Variant,
    depth_limited_value,
    entry_holds,
    optimal_successors,
)
from reference.games import connect4

from ...checks import Verdict
from ...checks.bounds import BoundProbe, bound_requirement, meets_bound
from ...checks.show import describe_error, is_number, show
from ..kit.messages import counted
from ..kit.observations import STUDENT_CPU
from .cache_match import Difference, cache_difference, reported, same_entry
from .cases import GAME, Replay, reached_limit, rounds_match, variant_counts
from .clock import GUARD_SECONDS, VirtualClock, counts
from .hints import COUNT_BUGS, board_of, drawn
from .picture import entry_details, move_details, position_details

# the least CPU time a genuine next_states call costs the student's process (the counting
# wrapper and the move generator: about 80 us here; less would take a machine 4x faster)
MIN_CPU_PER_CALL = 20e-6
TOP_REPORTED = 2000  # the observer reports at most this many top-level evaluate calls (observer.TOP_LIMIT)
SHOWN = 3
SEARCH_BUDGET = 15_000  # next_states calls of the reference searches checking one call's cache


def raised(call: dict, text: str, State: tuple) -> Verdict:
    if call.get("stopped"):
        return at(
            State, Verdict.fail(f"{text} was stopped by the grader ({stop_reason(call)}).\nThe position:{drawn(State)}")
        )
    return at(State, Verdict.fail(f"{text} raised {describe_error(call['error'])}\nThe position:{drawn(State)}"))


def wrong_entry_details(State: tuple, entry: Any) -> dict:
    """The position and the state of the first cache entry that does not hold (when its key
    holds a state at all)."""
    key = entry.get("key") if isinstance(entry, dict) else None
    if not isinstance(key, dict) or "state" not in key:
        return position_details(State)
    note = "The first entry of gCache that does not hold is about the state on the right."
    return entry_details(State, key["state"], key.get("limit"), note)


def at(State: tuple, verdict: Verdict) -> Verdict:
    """A failed verdict with the position drawn in the report (unless it has a picture)."""
    return verdict if verdict.passed or verdict.details else verdict.with_details(position_details(State))


def stop_reason(call: dict) -> str:
    if call.get("stopped") == "limit":
        return "it went on deepening far past where it should have stopped"
    return "it was still searching long after its time limit (on the virtual clock)"


def failed(call: dict) -> bool:
    return bool(call.get("error") or call.get("stopped"))


def judge_value(call: dict, expected: float, text: str, State: tuple, bugs: tuple[str, ...] = ()) -> Verdict:
    if failed(call):
        return raised(call, text, State)
    returned = call.get("returned")
    if is_number(returned) and abs(cast(float, returned) - expected) < 1e-12:
        return Verdict.ok(f"{text} returned {show(expected)}, as expected.")
    return at(
        State,
        Verdict.fail(
            f"{text} returned {show(returned)}; the depth-limited value is {show(expected)}.\n"
            f"The position:{drawn(State)}",
            bugs,
        ),
    )


# a search the cache check may hold a report to: (name, accepted, what it counts and stores)
Search = tuple[str, bool, Replay]


def judge_cache(
    calls: list[tuple[str, dict, tuple, int]],
    bugs: tuple[str, ...] = (),
    searches: Callable[[], Iterable[Search]] | None = None,
) -> Verdict:
    """Every entry of gCache after each call (text, observation, root state, limit) holds
    for its (State, limit), and the root's own entry is there. With `searches` (the known
    searches on the case's cold and warm calls, accepted first; `calls` those two), the
    reports must also be exactly the caches of an accepted search whose next_states counts
    the student's match (or of a known bug's making the same counts): the report is the
    student's process's word, and one with its wrong entries left out and its size lowered
    held only sound entries. Counts of known bugs alone don't bind the cache: another search
    can make them (and they fail `nodes`). A cache that is an accepted search's is sound
    without the reference's proofs."""
    if searches is None or len(calls) != 2 or not all(readable(call) for _text, call, _State, _limit in calls):
        return sound_cache(calls, bugs)  # says what is wrong with a call that failed or a cache that isn't a dict
    counts = reported_counts(calls)
    if counts is None:  # the observer sends whole numbers: anything else would dodge the rule below
        return Verdict.fail(
            f"After {calls[0][0]}, the size of gCache or the count of next_states calls is not a whole number: "
            "the report is not the grader's observer's (was it tampered with?).",
            bugs,
        )
    reports = [cast(dict, call["cache"]) for _text, call, _State, _limit in calls]
    for name, accepted, search in searches():
        if not accepted:
            break
        if search.counts == counts and caches_difference(reports, search) is None:
            size = reports[-1]["size"]
            return Verdict.ok(
                f"gCache after both calls is exactly the cache of an accepted search "
                f"({ACCEPTED_SAY.get(name, name)}): every one of its {size:,} entries holds for its (State, limit)."
            )
    verdict = sound_cache(calls, bugs)
    if not verdict.passed:
        return verdict
    fitting = [(name, accepted, search) for name, accepted, search in searches() if search.counts == counts]
    # Only an accepted search's counts pass `nodes`, so only they are worth forging: a report
    # with them must be the cache of a known search that makes them. Counts of known bugs alone
    # (nodes fails) may be made by another search too (a bug of its own whose count coincides
    # on this case): held to soundness alone, as counts of no known search are.
    if not any(accepted for _name, accepted, _search in fitting):
        return verdict
    found: list = []
    for _name, _accepted, search in fitting:
        found.append(caches_difference(reports, search))
        if found[-1] is None:
            return verdict
    # several accepted searches may make the same counts: name the one the report is closest to
    closest = max(
        (k for k, (_name, accepted, _search) in enumerate(fitting) if accepted),
        key=lambda k: agreement(reports, fitting[k][2]),
    )
    (name, _accepted, _), (index, difference) = fitting[closest], found[closest]
    text, _call, State, limit = calls[index]
    whose = f"the accepted search ({ACCEPTED_SAY.get(name, name)})"
    said = (
        f"After {text}, gCache is not the cache of {whose} whose next_states counts yours match "
        f"({counts[0]:,} on the empty cache, {counts[1]:,} warm): {difference.said}. "
        + (
            f"{difference.cause[0].upper()}{difference.cause[1:]}."
            if difference.cause
            else "No search leaves such a report: it is not the grader's observer's (was it tampered with?)."
        )
    )
    if difference.State is not None:
        return Verdict.fail(said, bugs).with_details(
            entry_details(
                State, connect4.encode(difference.State), difference.limit, "The state of that entry is on the right."
            )
        )
    return at(State, Verdict.fail(said + f"\nThe position:{drawn(State)}", bugs))


def agreement(reports: list[dict], search: Replay) -> int:
    """How many entries of the cold and warm reports are the same in `search`'s caches."""
    same = 0
    for report, cache in zip(reports, search.reported()):
        entries = reported(report) or {}
        same += sum(1 for mark, seen in entries.items() if mark in cache and same_entry(seen, cache[mark]))
    return same


def readable(call: dict) -> bool:
    """The call ran and reported a dict's cache (its size not None)."""
    report = call.get("cache")
    return not failed(call) and isinstance(report, dict) and report.get("size") is not None


def reported_counts(calls: list[tuple[str, dict, tuple, int]]) -> tuple[int, int] | None:
    """The next_states counts of the cold and warm calls; None when a count or a cache's
    size is not a whole number."""
    counts = []
    for _text, call, _State, _limit in calls:
        if type(call["cache"].get("size")) is not int or type(call.get("expansions")) is not int:
            return None
        counts.append(call["expansions"])
    return counts[0], counts[1]


def caches_difference(reports: list[dict], search: Replay) -> tuple[int, Difference] | None:
    """The first call whose report is not `search`'s cache, and how; None when both are."""
    cold, warm = search.reported()
    first = cache_difference(reports[0], cold, None)
    if first is not None:
        return 0, first
    second = cache_difference(reports[1], warm, reported(reports[0]))
    return None if second is None else (1, second)


def sound_cache(calls: list[tuple[str, dict, tuple, int]], bugs: tuple[str, ...] = ()) -> Verdict:
    """Every entry of gCache after each call holds for its (State, limit), and the root's
    own entry is there (proved entry by entry with the reference's searches)."""
    memo: dict = {}  # bounds proven so far, shared by every entry of every call
    boards: dict = {}  # each key's board, decoded and checked once
    checked = 0
    seen: set = set()  # entries already found sound (the warm cache repeats most of the cold one)
    room = 0  # entries the reports before this one held: the most this one may leave out as repeated
    for text, call, State, limit in calls:
        if failed(call):
            return raised(call, text, State)
        raw_report, raw_entries = call.get("cache"), None
        report: dict = raw_report if isinstance(raw_report, dict) else {}
        raw_entries = report.get("entries")
        entries: list = raw_entries if isinstance(raw_entries, list) else []
        if report.get("size") is None:
            return at(State, Verdict.fail(f"After {text}, gCache is not a dict ({show(report.get('type'))}).", bugs))
        problems = []
        wrong: list = []  # the entries behind `problems`
        keys = set()
        game = BudgetedGame(GAME, SEARCH_BUDGET)
        try:
            for entry in entries:
                key = entry.get("key") if isinstance(entry, dict) else None
                if isinstance(key, dict) and "state" in key:
                    keys.add((tuple(key["state"]) if isinstance(key["state"], list) else None, key.get("limit")))
                mark = entry_mark(entry)
                if mark in seen:
                    continue
                problem = entry_problem(entry, memo, boards, game, limit)
                if problem is None:
                    seen.add(mark)
                else:
                    problems.append(problem)
                    wrong.append(entry)
        except OutOfBudget:
            return at(
                State,
                Verdict.fail(
                    f"After {text}, gCache holds {len(entries):,} entries that take the grader more than "
                    f"{SEARCH_BUDGET:,} searched positions to check; a search to limit {limit} from this position "
                    f"stores far fewer. Store only what evaluate found, keyed (State, limit).",
                    bugs,
                ),
            )
        # entries the observer left out as sent unchanged by the call before (checked there)
        repeated: int = report["repeated"] if type(report.get("repeated")) is int and report["repeated"] >= 0 else 0
        if repeated > room:  # the student's process's word, held to what was sent before
            return Verdict.fail(
                f"After {text}, the report of gCache leaves out {repeated:,} entries as sent before, but the "
                f"reports before it held {room:,}: it is not the grader's observer's (was it tampered with?).",
                bugs,
            )
        room = len(entries) + repeated
        checked += len(entries) + repeated
        if problems:
            more = f"\n... and {len(problems) - SHOWN} more wrong entries." if len(problems) > SHOWN else ""
            head = f"After {text}, {len(problems)} of the {len(entries) + repeated} entries of gCache do not hold:"
            verdict = Verdict.fail("\n".join([head, *(said() for said in problems[:SHOWN])]) + more, bugs)
            return verdict.with_details(wrong_entry_details(State, wrong[0]))
        if (tuple(connect4.encode(State)), limit) not in keys:
            return at(
                State,
                Verdict.fail(
                    f"After {text}, gCache has no entry for (State, {limit}): evaluate must store what it "
                    f"found with store_cache(State, limit, alpha, beta, value).\nThe position:{drawn(State)}",
                    bugs,
                ),
            )
    return Verdict.ok(f"every one of the {checked} cache entries holds for its (State, limit).")


class OutOfBudget(Exception):
    """The reference searches for one call's cache went past their budget."""


class BudgetedGame:
    """The judges' game with a budget of `next_states` calls: a hostile cache (thousands of
    far-away positions at a deep limit) must not keep the grader searching for minutes."""

    def __init__(self, game: Any, budget: int) -> None:
        self.game, self.left = game, budget
        self.gPlayers, self.to_move = game.gPlayers, game.to_move
        self.finished, self.utility, self.heuristic = game.finished, game.utility, game.heuristic

    def next_states(self, State: tuple, player: str) -> list:
        self.left -= 1
        if self.left < 0:
            raise OutOfBudget
        return self.game.next_states(State, player)


def entry_mark(entry: Any) -> Any:
    """What makes two entries the same entry, cheaply (the warm cache repeats the cold one)."""
    try:
        key = entry["key"]
        mark = (tuple(key["state"]), key["limit"], entry["flag"], entry["value"])
        hash(mark)  # a list or dict inside: fall back to the text
        return mark
    except (KeyError, TypeError):
        return repr(entry)


def decoded(state: Any, boards: dict) -> tuple | None:
    """The board a key holds (checked once per board: the same boards come back under
    every limit), or None when it isn't one."""
    mark = tuple(state) if isinstance(state, list) and all(isinstance(r, str) for r in state) else None
    if mark is not None and mark in boards:
        return boards[mark]
    try:
        State = connect4.decode(state)
    except ValueError:
        State = None
    if mark is not None:
        boards[mark] = State
    return State


def not_a_board(state: Any) -> str:
    """What is wrong with a key's state that is no Connect Four board (worked out only if shown)."""
    try:
        connect4.decode(state)
    except ValueError as exc:
        if "as many stones" in str(exc):
            return (
                "- a key holds a board no game reaches: 'X' must have as many stones as 'O' or one more. "
                f"Does maxValue play gPlayers[0] and minValue gPlayers[1]? The board:{drawn(tuple(map(tuple, state)))}"
            )
    return "- a key holds something that is not a Connect Four board."


def entry_problem(entry: Any, memo: dict, boards: dict, game: Any, deepest: int) -> Callable[[], str] | None:
    """None when the entry holds; else what to say about it (worked out only if shown:
    the exact value of a wrong entry costs a full search). `deepest`: the call's own limit,
    which no entry of a correct search exceeds."""
    if not isinstance(entry, dict):
        return lambda: "- a malformed entry"
    key, flag, value = entry.get("key"), entry.get("flag"), entry.get("value")
    if not isinstance(key, dict) or "state" not in key:
        shown = key.get("unencodable") if isinstance(key, dict) else key
        return lambda: f"- the key {show(shown)} is not a pair (State, limit)."
    limit = key.get("limit")
    if limit is None:
        return lambda: (
            f"- an entry is keyed by the state alone, without the limit: a value found at one depth "
            f"would be used for another. The key must be (State, limit). The state:{board_of(key['state'])}"
        )
    if flag not in FLAG_SPELLINGS:
        return lambda: f"- the entry for limit {limit} has the flag {show(flag)}; flags are '=', '≤' and '≥'."
    if not is_number(value):
        return lambda: f"- the entry for limit {limit} holds {show(value)}, not a number."
    State = decoded(key["state"], boards)
    if State is None:
        return lambda: not_a_board(key["state"])
    if not 0 <= limit <= deepest:
        return lambda: (
            f"- an entry for limit {limit}: the search started at limit {deepest} and counts down, so no "
            f"position of it is searched to {limit}. The state:{drawn(State)}"
        )
    if entry_holds(State, limit, flag, cast(float, value), game=game, memo=memo):
        return None

    def said() -> str:
        true = depth_limited_value(State, limit, game=GAME, memo={})
        claim = {"=": "claims exactly", "≤": "claims at most", "≥": "claims at least"}[FLAG_SPELLINGS[flag]]
        return (
            f"- gCache[(State, {limit})] = ({flag!r}, {show(value)}) {claim} {show(value)}, but the state's value "
            f"searched to {limit} is {show(true)}. The state ({connect4.to_move(State)} to move):{drawn(State)}"
        )

    return said


# the accepted searches (reference.connect4_search.ACCEPTED) as the nodes check names them
ACCEPTED_SAY = {
    "seed": "the course's code with heapq",
    "sorted": "sorted with a key",
    "fail_hard": "fail-hard",
    "sorted_fail_hard": "sorted and fail-hard",
    "previous_round_order": "ordered by the previous round's values",
    "textbook_fail_soft": "fail-soft from -inf",
}


def accepted_pairs(State: tuple, limit: int) -> dict[str, tuple[int, int]]:
    """Each accepted search's next_states counts, (cold, warm): worked out only when a count
    fails, to say which count belongs to which search."""
    cold = variant_counts(State, limit, False, ACCEPTED)
    warm = variant_counts(State, limit, True, ACCEPTED)
    return {name: (cold[name], warm[name]) for name in ACCEPTED}


def judge_nodes(
    cold: dict,
    warm: dict,
    expected_cold: list,
    expected_warm: list,
    text: str,
    State: tuple,
    limit: int,
    counts: Any,
    accepted: Callable[[], dict[str, tuple[int, int]]] | None = None,
) -> Verdict:
    """`counts()` -> the counts of the COUNT_BUGS searches, cold and warm; `accepted()` ->
    the accepted searches' (default: worked out here); both asked only on failure."""
    for call in (cold, warm):
        if failed(call):
            return raised(call, text, State)
    seen_cold, seen_warm = cold.get("expansions"), warm.get("expansions")
    if seen_cold in expected_cold and seen_warm in expected_warm:
        return Verdict.ok(
            f"{text} called next_states {seen_cold:,} times on an empty cache and {seen_warm:,} times on a warm one, "
            f"counts of the accepted searches."
        )
    pairs = (accepted or (lambda: accepted_pairs(State, limit)))()
    lines = [
        f"{text} called next_states {seen_cold:,} times on an empty cache and {seen_warm:,} times on a warm one "
        f"(after evaluate at limits 0 to {limit} on one cache); {_no_accepted(pairs, seen_cold, seen_warm)}.",
        *_which_fits(pairs, seen_cold, seen_warm),
        "The accepted searches, empty cache / warm: " + _listed(pairs) + ".",
    ]
    bug_counts = counts()
    which = [name for name, (c, w) in bug_counts.items() if c == seen_cold and w == seen_warm]
    bugs = tuple(sorted(which))
    hint = ""
    if which:
        lines.append("These are exactly the counts of " + " and of ".join(COUNT_BUGS[n] for n in which) + ".")
    elif seen_cold > max(expected_cold):
        hint = (
            "Your search calls next_states more often: search the successors best first by their cached value "
            "one level down (maxValue: highest first, minValue: lowest first), and let evaluate use gCache."
        )
    else:
        hint = (
            "Your search calls next_states less often than the course's: does it cut off only when value >= beta "
            "(maxValue) or value <= alpha (minValue), and search every successor otherwise?"
        )
    return at(State, Verdict.fail("\n".join(lines) + f"\nThe position:{drawn(State)}", bugs, hint))


def _no_accepted(pairs: dict[str, tuple[int, int]], seen_cold: Any, seen_warm: Any) -> str:
    if any(c == seen_cold for c, _ in pairs.values()) or any(w == seen_warm for _, w in pairs.values()):
        return "no accepted search makes both counts"
    return "no accepted search makes either count"


def _which_fits(pairs: dict[str, tuple[int, int]], seen_cold: Any, seen_warm: Any) -> list[str]:
    """For a count that is some accepted search's: whose, and what that search does in the
    other call (the count that doesn't fit)."""
    lines = []
    calls = ((seen_cold, "on the empty cache", "warm"), (seen_warm, "warm", "on the empty cache"))
    for index, (mine, where, other) in enumerate(calls):
        owners = [name for name, pair in pairs.items() if pair[index] == mine]
        if owners:
            theirs = " or ".join(f"{c:,}" for c in sorted({pairs[n][1 - index] for n in owners}))
            yours = calls[1 - index][0]
            whose = "an accepted search" if len(owners) == 1 else "accepted searches"
            said = ", ".join(ACCEPTED_SAY.get(n, n) for n in owners)
            lines.append(
                f"Your count {where} ({mine:,}) is that of {whose} ({said}), which "
                f"{'calls' if len(owners) == 1 else 'call'} next_states {theirs} times {other}: "
                f"your count {other} ({yours:,}) doesn't fit."
            )
    return lines


def _listed(pairs: dict[str, tuple[int, int]]) -> str:
    """The accepted searches grouped by their pair of counts."""
    groups: dict[tuple[int, int], list[str]] = {}
    for name, pair in pairs.items():
        groups.setdefault(pair, []).append(ACCEPTED_SAY.get(name, name))
    if len(groups) == 1:
        (c, w), _ = next(iter(groups.items()))
        return f"{c:,} / {w:,} (every one)"
    return "; ".join(f"{c:,} / {w:,} ({', '.join(names)})" for (c, w), names in groups.items())


def judge_bounds(probes: list[tuple[BoundProbe, dict]], State: tuple, bugs: tuple[str, ...] = ()) -> Verdict:
    failures = []
    for probe, call in probes:
        if failed(call):
            failures.append(
                f"{probe.call} {'was stopped' if call.get('stopped') else 'raised'} "
                f"{describe_error(call['error']) if call.get('error') else ''}".rstrip()
            )
        elif not meets_bound(call.get("returned"), probe):
            failures.append(f"{probe.call} returned {show(call.get('returned'))}, but {bound_requirement(probe)}.")
    if not failures:
        return Verdict.ok(f"all {len(probes)} calls with narrowed windows met the bound specification.")
    head = f"{len(failures)} of {len(probes)} calls with narrowed windows broke the bound specification:"
    return at(State, Verdict.fail("\n".join([head, *failures[:SHOWN]]) + f"\nThe position:{drawn(State)}", bugs))


def rounds(call: dict, State: tuple) -> list[list]:
    """The top-level evaluate calls on the position itself: [limit, value, began, ended,
    state], `began` and `ended` the work done by then ([next_states calls, rounds])."""
    root = connect4.encode(State)
    raw = call.get("top")
    top: list = raw if isinstance(raw, list) else []
    return [t for t in top if isinstance(t, list) and len(t) == 5 and t[4] == root]


def decided(value: Any) -> bool:
    return is_number(value) and value in (-1, 1)


def pair(returned: Any) -> tuple[Any, Any] | None:
    if isinstance(returned, dict) and returned.get("type") in ("tuple", "list"):
        items = returned.get("items")
        if isinstance(items, list) and len(items) == 2:
            return items[0], items[1]
    return None


def marks_consistent(marks: list[tuple[tuple[int, int] | None, tuple[int, int] | None]], call: dict) -> bool:
    """Whether the rounds' marks can be the observer's: the work done only grows, each round
    ends one evaluate round after it began, and no mark counts more rounds than the top-level
    evaluate calls reported (each adds exactly one). The next_states calls they claim are
    held by the CPU time the grader measured (deepening_findings)."""
    reported = call.get("top")
    most = len(reported) if isinstance(reported, list) else 0
    done = (0, 0)
    for began, ended in marks:
        if began is None or began[0] < done[0] or began[1] < done[1]:
            return False
        done = began
        if ended is not None:
            if ended[0] < began[0] or ended[1] != began[1] + 1 or (most < TOP_REPORTED and ended[1] > most):
                return False
            done = ended
    return True


@dataclass(frozen=True)
class RoundsMatch:
    """A known search whose deepening rounds make exactly the next_states counts the
    student's rounds report, round by round: the reference's counts, not the report's word."""

    name: str
    accepted: bool
    counts: tuple[int, ...]  # each round's next_states calls
    outside: int  # the calls the report puts before the first round or between rounds
    variant: Variant  # that search, for where its deepening stops (choice)
    before: int = 0  # of `outside`, those before the first round (best_move's own next_states call)

    def marks(self) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        """The rounds' marks of that search, from the call's start: no calls outside them."""
        marks, done = [], 0
        for index, count in enumerate(self.counts):
            marks.append(((done, index), (done + count, index + 1)))
            done += count
        return marks

    def said(self, own_calls_first: bool = False) -> str:
        """`own_calls_first`: the calls before the first round are the caller's own
        (best_move's next_states before pd_evaluate's start), not worth a word."""
        if self.accepted:
            whose = f"those of an accepted search ({ACCEPTED_SAY.get(self.name, self.name)})"
        else:
            whose = f"exactly those of {COUNT_BUGS[self.name]}, a known bug (see nodes)"
        said = (
            f"Its rounds' next_states counts are {whose}, so the grader's clock is replayed from "
            "the reference's counts of that search"
        )
        outside = self.outside - self.before if own_calls_first else self.outside
        if outside:
            where = "between evaluate's rounds" if own_calls_first else "outside evaluate's rounds"
            said += f"; the {counted(outside, 'call')} the report puts {where} are not counted (that search makes none)"
        return said + "."


NO_MATCH = (
    "Its rounds' next_states counts are no accepted search's (nor a known bug's): the grader's clock is "
    "replayed from the counts its process reported."
)


REPLAY_MOST = 150_000  # next_states calls: the bundled clock's 10 s time limit and the guard, and some
MOST_ROUNDS = 31  # a case's max_limit is at most 30: the guard stops evaluate past it


def replay_budget(time_limit: float, clock: VirtualClock) -> int:
    """The most next_states calls a search's finished rounds can hold: the guard stops it
    GUARD_SECONDS past its time limit on the virtual clock (at most REPLAY_MOST: a case's
    faster clock lets a search go further, and its rounds then keep the CPU-time rule)."""
    return min(int((time_limit + GUARD_SECONDS) / clock.per_call) + 1, REPLAY_MOST)


def known_deepenings() -> list[tuple[str, bool, Variant]]:
    """The searches whose rounds the judge replays: the accepted ones (the course's code
    first), then the bugs the nodes check names by their counts."""
    searches, seen = [], set()
    for name, variant, accepted in [
        *((n, v, True) for n, v in ACCEPTED.items()),
        *((n, BUGS[n][0], False) for n in COUNT_BUGS),
    ]:
        if variant not in seen:
            seen.add(variant)
            searches.append((name, accepted, variant))
    return searches


def rounds_matched(
    steps: list[list], marks: list[tuple[tuple[int, int] | None, tuple[int, int] | None]], State: tuple, budget: int
) -> RoundsMatch | None:
    """The first known search whose rounds at limits 0, 1, ... make the counts the marks
    report (each round's end minus its start), or None (a round unfinished, or no known
    search's counts)."""
    if len(steps) > MOST_ROUNDS or [step[0] for step in steps] != list(range(len(steps))):
        return None
    if any(ended is None for _, ended in marks):
        return None
    ends = cast(list[tuple[tuple[int, int], tuple[int, int]]], marks)
    claimed = [ended[0] - began[0] for began, ended in ends]
    outside = ends[-1][1][0] - sum(claimed)
    for name, accepted, variant in known_deepenings():
        if rounds_match(State, variant, claimed, budget):
            return RoundsMatch(name, accepted, tuple(claimed), outside, variant, ends[0][0][0])
    return None


Marks = list[tuple[tuple[int, int] | None, tuple[int, int] | None]]  # each round's (began, ended)


@dataclass(frozen=True)
class Rounds:
    """A deepening's rounds on the position (pd_evaluate's, or best_move's), read for the
    stop rule: the marks its clock is replayed from (the reference's counts of the search
    they match, else the report's) and the latest start the deepening can have taken (its
    first round's beginning: best_move's own next_states call may come before)."""

    steps: list[list]
    marks: Marks
    latest_start: float
    match: RoundsMatch | None

    def basis(self, own_calls_first: bool = False) -> str:
        """What the clock was replayed from, for the feedback (RoundsMatch.said)."""
        return self.match.said(own_calls_first) if self.match is not None else NO_MATCH


def read_rounds(call: dict, steps: list[list], State: tuple, time_limit: float, clock: VirtualClock) -> Rounds | None:
    """The rounds' marks and the search they match (rounds_matched), or None when the
    observer's report of them can't be read."""
    marks: Marks = [(counts(began), counts(ended)) for _limit, _value, began, ended, _state in steps]
    first = marks[0][0]
    unreadable = any(began is None or (ended is None and i < len(steps) - 1) for i, (began, ended) in enumerate(marks))
    if first is None or unreadable or not marks_consistent(marks, call):
        return None
    match = rounds_matched(steps, marks, State, replay_budget(time_limit, clock))
    if match is not None:  # the reference's counts: the report's own marks are not read
        marks, first = list(match.marks()), (0, 0)
    return Rounds(steps, marks, clock.seconds(*first), match)


@dataclass(frozen=True)
class WentOn:
    """The first round after which a deepening should have stopped and did not."""

    index: int
    said: str
    bug: str  # the deepening bug it shows


def went_on(read: Rounds, values: list, time_limit: float, clock: VirtualClock, who: str) -> WentOn | None:
    """The first round, not the last, whose value (`values`, as the rounds report them) is
    decided, or that ended past `time_limit` from the latest start: the deepening must stop
    there."""
    for index, step in enumerate(read.steps[:-1]):
        limit, following = step[0], read.steps[index + 1][0]
        value = values[index] if index < len(values) else step[1]
        if decided(value):
            said = (
                f"evaluate at limit {limit} returned {show(value)}: the value is decided, yet {who} went on "
                f"with limit {following}."
            )
            return WentOn(index, said, "deepening_ignores_decided")
        ended = read.marks[index][1]
        if ended is not None and clock.seconds(*ended) - read.latest_start > time_limit + clock.slack:
            said = (
                f"the search at limit {limit} ended {clock.seconds(*ended) - read.latest_start:.4f} s after the start "
                f"(on the grader's clock), past the time limit of {time_limit} s, yet {who} went on with "
                f"limit {following}.\n{clock.described()}"
            )
            return WentOn(index, said, "deepening_ignores_time")
    return None


def early_stop(read: Rounds, value: Any, time_limit: float, clock: VirtualClock, who: str) -> str | None:
    """What to say when the last round (`value`: its value) ended within `time_limit` from
    the call's start with an undecided value: the deepening must not stop there."""
    limit, ended = read.steps[-1][0], read.marks[-1][1]
    if ended is None or decided(value) or clock.seconds(*ended) >= time_limit - clock.slack:
        return None
    return (
        f"{who} stopped after limit {limit} ({clock.seconds(*ended):.4f} s after the start on the "
        f"grader's clock), before the time limit of {time_limit} s, with the undecided value {show(value)}."
        f"\n{clock.described()}"
    )


def cpu_unproven(read: Rounds, value: Any, call: dict, who: str) -> str | None:
    """A stop on an undecided value after rounds of no known search's counts: they are the
    student's process's word, held to the CPU time the grader measured for the request,
    which the process can lengthen (by computing) but never shorten; counts no search could
    make in that time were not made."""
    ended = read.marks[-1][1]
    spent = call.get(STUDENT_CPU)
    if read.match is not None or ended is None or decided(value) or not isinstance(spent, float):
        return None
    if spent >= ended[0] * MIN_CPU_PER_CALL:
        return None
    return (
        f"{who}'s rounds report {ended[0]:,} calls of next_states, but the whole request used "
        f"{spent:.3f} s of CPU time, less than those calls take (at least {MIN_CPU_PER_CALL * 1e6:g} us "
        "each): the report of the rounds is not what the search did (was the observer tampered with?)."
    )


UNREADABLE_ROUNDS = "the observer's report of the rounds could not be read (was it tampered with?)."
UNREADABLE_LAST = "the observer's report of the last round could not be read (was it tampered with?)."


def deepening_findings(
    call: dict, State: tuple, values: list, time_limit: float, clock: VirtualClock
) -> tuple[list[str], set[str], str]:
    """What is wrong with one pd_evaluate call, which deepening bugs it shows, and what the
    clock was replayed from. The stop rule is judged on the virtual clock: pd_evaluate took
    its start somewhere between the start of the call and its first round, so it must stop
    after a round that ended past `time_limit` even from the latest possible start, and must
    not stop (undecided) after one that ended within it even from the earliest. When the
    rounds' counts are a known search's (rounds_matched), the clock is replayed from that
    search's counts, from the first round on; else from the marks the process reported."""
    steps = rounds(call, State)
    problems: list[str] = []
    shown: set[str] = set()
    if not steps:
        return ["pd_evaluate never called evaluate(State, limit, f) on the position."], shown, ""
    read = read_rounds(call, steps, State, time_limit, clock)
    if read is None:
        return [UNREADABLE_ROUNDS], shown, ""
    basis = read.basis()
    limits = [s[0] for s in steps]
    if limits != list(range(len(steps))):
        problems.append(f"pd_evaluate called evaluate with the limits {limits}; they must be 0, 1, 2, ... in order.")
    parted = went_on(read, [step[1] for step in steps], time_limit, clock, "pd_evaluate")
    wrong_values = False
    for index, (limit, value, _began, _ended, _state) in enumerate(
        steps[: None if parted is None else parted.index + 1]
    ):
        if index < len(values) and not (is_number(value) and abs(value - values[index]) < 1e-12):
            wrong_values = True
            problems.append(
                f"evaluate at limit {limit} returned {show(value)}; the value at that depth is {show(values[index])}."
            )
    if parted is not None:
        problems.append(parted.said)
        shown.add(parted.bug)
    if wrong_values:
        shown = {"wrong_values"}  # the search is wrong, not (necessarily) the deepening
    if call.get("stopped"):
        problems.append(f"The grader stopped pd_evaluate: {stop_reason(call)}.")
        if not shown:
            shown.add("deepening_ignores_decided" if decided(steps[-1][1]) else "deepening_ignores_time")
        return problems, shown, basis
    if call.get("error"):
        return [*problems, f"pd_evaluate raised {describe_error(call['error'])}"], shown, basis
    limit, value = steps[-1][0], steps[-1][1]
    if read.marks[-1][1] is None:
        return [*problems, UNREADABLE_LAST], shown, basis
    if not problems:
        late = early_stop(read, value, time_limit, clock, "pd_evaluate") or cpu_unproven(
            read, value, call, "pd_evaluate"
        )
        problems += [late] if late else []
    got = pair(call.get("returned"))
    if got is None or not (same_number(got[0], value) and got[1] == limit):
        problems.append(
            f"pd_evaluate returned {show(call.get('returned'))}; it must return the pair "
            f"({show(value)}, {limit}) of its last search."
        )
    return problems, shown, basis


def same_number(a: Any, b: Any) -> bool:
    return is_number(a) and is_number(b) and abs(a - b) < 1e-12


def judge_deepening(
    call: dict, State: tuple, values: list, time_limit: float, text: str, clock: VirtualClock
) -> tuple[Verdict, set[str]]:
    problems, shown, basis = deepening_findings(call, State, values, time_limit, clock)
    steps = rounds(call, State)
    said = f"\n{basis}" if basis else ""
    if not problems:
        last = steps[-1]
        why = "the value is decided" if decided(last[1]) else f"the time limit of {time_limit} s had passed"
        return Verdict.ok(f"{text} searched to limits 0 to {last[0]} and stopped because {why}.{said}"), shown
    return at(State, Verdict.fail("\n".join([f"{text}:", *problems]) + f"{said}\nThe position:{drawn(State)}")), shown


def judge_choice(
    call: dict,
    State: tuple,
    stored: tuple[int, list],
    text: str,
    time_limit: float,
    max_limit: int,
    clock: VirtualClock,
) -> Verdict:
    """best_move deepened as pd_evaluate must (choice_stop) and returned an optimal move at
    the depth it reached, with the value there; `stored`: the case's (limit, optimal
    moves) where the course's code stops."""
    if failed(call):
        return raised(call, text, State)
    steps = rounds(call, State)
    if not steps or not isinstance(steps[-1][0], int):
        return at(
            State,
            Verdict.fail(f"{text} never called pd_evaluate's evaluate on the position.\nThe position:{drawn(State)}"),
        )
    memo: dict = {}  # the moves' values at limit - 1 are the value's own search's first level
    stop, basis = choice_stop(call, steps, State, time_limit, max_limit, clock, memo)
    limit = steps[-1][0]
    if stop and basis is None:  # the rounds can't be judged: nor can a move at their depth
        return at(State, Verdict.fail(f"{text}:\n" + "\n".join(stop) + f"\nThe position:{drawn(State)}"))
    if limit == stored[0]:
        optimal = stored[1]
    else:
        optimal = [connect4.encode(s) for s in optimal_successors(State, limit, game=GAME, memo=memo)]
    # on the judges' memoised game (bit_heuristic: the same floats, a fraction of the time)
    value = depth_limited_value(State, limit, game=GAME, memo=memo)
    move = call.get("move")
    said = f"\n{basis}" if basis else ""
    if not isinstance(move, dict):
        return at(
            State,
            Verdict.fail(
                "\n".join(
                    [f"{text} returned {show(call.get('returned'))}; it must return a pair (value, state).", *stop]
                )
                + said
            ),
        )
    successors = [connect4.encode(s) for s in connect4.next_states(State, connect4.gPlayers[0])]
    problems = list(stop)
    if move.get("state") not in successors:
        problems.append("Its second item is not a state that X reaches with one move.")
    elif move["state"] not in optimal:
        problems.append(
            f"At the depth reached ({limit}), that move is not optimal. Your move leads to:"
            f"{board_of(move['state'])}\nAn optimal move leads to:{board_of(optimal[0])}"
        )
    if not same_number(move.get("value"), value):
        problems.append(
            f"Its value is {show(move.get('value'))}; the position's value at limit {limit} is {show(value)}."
        )
    if problems:
        verdict = Verdict.fail(
            f"{text} returned {show(call.get('returned'))}.\n"
            + "\n".join(problems)
            + said
            + f"\nThe position:{drawn(State)}"
        )
        if move.get("state") in successors and move["state"] not in optimal:
            return verdict.with_details(move_details(State, move["state"], optimal, limit))
        return at(State, verdict)
    return Verdict.ok(
        f"{text} searched to limits 0 to {limit} and returned an optimal move there ({len(optimal)} of "
        f"{len(successors)} moves are optimal).{said}"
    )


STOPPED_BY = {
    "time": "its time is up",
    "decided": "its value is decided",
    "max_limit": "it reaches the case's max_limit",
}


def choice_stop(
    call: dict, steps: list[list], State: tuple, time_limit: float, max_limit: int, clock: VirtualClock, memo: dict
) -> tuple[list[str], str | None]:
    """What is wrong with best_move's deepening stop, and what its clock was replayed from
    (None: the rounds can't be read). The stop rule is pd_evaluate's (read_rounds, went_on,
    early_stop, cpu_unproven) on the values the rounds report, as `deepening` applies it,
    except that a last round's value must be the reference's to end the deepening (a stop
    claimed on a decided value that isn't); when best_move stopped early after rounds of a
    known search, the message says where that search stops on the clock."""
    limits = [step[0] for step in steps]
    if limits != list(range(len(steps))):
        return [f"best_move called evaluate on the position with the limits {limits}; they must be 0, 1, 2, ..."], None
    if limits[-1] > max_limit:  # the observer's guard stops evaluate past max_limit
        return [UNREADABLE_ROUNDS], None
    read = read_rounds(call, steps, State, time_limit, clock)
    if read is None:
        return [UNREADABLE_ROUNDS], None
    if read.marks[-1][1] is None:
        return [UNREADABLE_LAST], None
    values = [step[1] for step in steps]
    parted = went_on(read, values, time_limit, clock, "best_move")
    if parted is not None:
        return [f"{parted.said}\nIt should have stopped after limit {limits[parted.index]}."], read.basis(True)
    true = depth_limited_value(State, limits[-1], game=GAME, memo=memo)
    last = values[-1] if same_number(values[-1], true) else true  # a stop on a decided value needs it true
    early = early_stop(read, last, time_limit, clock, "best_move")
    if early is None:
        unproven = cpu_unproven(read, last, call, "best_move")
        return ([unproven] if unproven else []), read.basis(True)
    basis = read.basis(True)
    if read.match is None:
        return [f"{early}\nIt should have gone on with limit {limits[-1] + 1} at least."], basis
    reached = reached_limit(State, read.match.variant, time_limit, max_limit, clock, replay_budget(time_limit, clock))
    if reached is not None and reached[0] > limits[-1]:
        basis += f" On that clock, that search goes on to limit {reached[0]}, where {STOPPED_BY[reached[1]]}."
    return [early], basis


RESULTS = {1: "X wins", 0: "a draw", -1: "O wins"}


def judge_solved(observed: list[dict], states: list[tuple], results: list, time_limit: float) -> Verdict:
    wrong = []
    first: tuple | None = None  # the first position not solved, drawn in the report
    for index, (State, result) in enumerate(zip(states, results)):
        call = observed[index] if index < len(observed) else {"error": {"type": "NoAnswer", "message": ""}}
        f = "maxValue" if connect4.to_move(State) == connect4.gPlayers[0] else "minValue"
        text = f"pd_evaluate(State, {time_limit}, {f})"
        if failed(call):
            wrong.append(raised(call, text, State).message)
            first = first or State
            continue
        got = pair(call.get("returned"))
        if got is None or not same_number(got[0], result):
            wrong.append(
                f"{text} returned {show(call.get('returned'))}; with perfect play the result is "
                f"{RESULTS[result]} ({result}).\nThe position ({connect4.to_move(State)} to move):"
                f"{drawn(State)}"
            )
            first = first or State
    if not wrong:
        return Verdict.ok(f"all {len(states)} end-game positions solved: the game-theoretic result every time.")
    head = f"{len(wrong)} of {len(states)} end-game positions were not solved:"
    verdict = Verdict.fail("\n".join([head, *wrong[:SHOWN]]))
    return at(first, verdict) if first is not None else verdict
