"""The `connect4` lab's reference: the rules and heuristic, Pons' solver, and the seed's search."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.labs.connect4.cases import timed_search
from grader.labs.connect4.clock import VirtualClock
from reference import connect4_search as search_module
from reference import connect4_solver as solver
from reference.connect4_search import (
    ACCEPTED,
    BUGS,
    EXACT,
    LOWER,
    SEED,
    UPPER,
    SeedSearch,
    Variant,
    deepening_values,
    depth_limited_value,
    entry_holds,
    entry_is_sound,
    load_solved_positions,
    next_states_counts,
    optimal_successors,
    unsound_entries,
)
from reference.games import connect4 as c4

X, O = c4.gPlayers  # noqa: E741 - the game names its players X and O
DRAWN_GAME = "547125662261271266215743771576315353334444"  # 42 moves, no line of four
L3 = solver.load_test_set("Test_L3_R1")


def board(*rows_top_down):
    """A state from text rows, top row first, '.' for empty (as `describe` draws)."""
    rows = [tuple(line.replace(".", c4.EMPTY)) for line in reversed(rows_top_down)]
    return tuple(rows + [tuple(c4.EMPTY * 7)] * (6 - len(rows)))


def random_game(rng, stop_before_end=True, max_moves=42):
    """A random legal move string; with `stop_before_end`, the game is not over."""
    State, moves = c4.gStart, ""
    while len(moves) < max_moves and not c4.finished(State):
        col = rng.choice([c for c in range(7) if State[5][c] == c4.EMPTY])
        after = c4.drop(State, col, c4.to_move(State))
        if stop_before_end and c4.finished(after):
            break
        State, moves = after, moves + str(col + 1)
    return moves


# -- rules ---------------------------------------------------------------------


def test_start_and_move_strings_follow_the_test_sets():
    assert c4.gPlayers == ["X", "O"]
    assert c4.gStart == tuple(tuple(" " for _ in range(7)) for _ in range(6))
    State = c4.from_moves("4453")
    assert c4.describe(State).splitlines()[-3:] == ["...O...", "..OXX..", "1234567"]
    assert State[0][3] == X and State[1][3] == O and State[0][4] == X and State[0][2] == O
    assert c4.to_move(State) == X and c4.stones(State) == 4
    assert c4.from_moves("1")[0][0] == X  # column 1 is the leftmost


@pytest.mark.parametrize(
    "moves, message",
    [
        ("4480", "not a column"),
        ("1111111", "column 1 is full"),
        ("12121212", "already over"),
    ],
)
def test_from_moves_rejects_illegal_sequences(moves, message):
    with pytest.raises(ValueError, match=message):
        c4.from_moves(moves)
    with pytest.raises(ValueError):
        solver.from_moves(moves)


def test_next_states_in_column_order_skipping_full_columns():
    State = c4.from_moves("333333")  # column 3 full
    successors = c4.next_states(State, X)
    assert successors == [c4.drop(State, col, X) for col in (0, 1, 3, 4, 5, 6)]
    assert successors[0][0][0] == X and successors[1][0][1] == X  # the stone falls to the bottom
    assert all(c4.stones(s) == 7 for s in successors)
    assert len(c4.next_states(c4.gStart, O)) == 7


@pytest.mark.parametrize(
    "moves, expected",
    [
        ("1122334", 1),  # X: horizontal on the bottom row
        ("1212121", 1),  # X: vertical
        ("12121272", -1),  # O: vertical in column 2
        ("121212", None),  # three each: the game goes on
        ("", None),
    ],
)
def test_utility_only_on_finished_states(moves, expected):
    State = c4.from_moves(moves)
    assert c4.utility(State) == expected
    assert c4.finished(State) == (expected is not None)


def test_wins_in_all_four_directions_for_both_players():
    horizontal = board("XXXX...")
    vertical = board("O......", "O......", "O......", "O......")
    rising = board("...X...", "..XO...", ".XOO...", "XOOX...")
    falling = board("O......", "XO.....", "XXO....", "XXXO...")
    assert c4.utility(horizontal) == 1 and c4.winner(horizontal) == X
    assert c4.utility(vertical) == -1
    assert c4.utility(rising) == 1
    assert c4.utility(falling) == -1
    for State in (horizontal, vertical, rising, falling):
        assert c4.finished(State)
        bits = solver.from_state(State)  # the bitboards see the line too
        assert solver.has_four(bits.position) or solver.has_four(bits.position ^ bits.mask)
    # three in a line is not a win
    assert c4.utility(board("XXX.OOO")) is None


def test_full_board_without_a_line_is_a_draw():
    State = c4.from_moves(DRAWN_GAME)
    assert c4.stones(State) == 42 and c4.winner(State) is None
    assert c4.finished(State) and c4.utility(State) == 0
    assert c4.next_states(State, X) == []
    assert c4.from_moves(DRAWN_GAME[:-1]) != State and not c4.finished(c4.from_moves(DRAWN_GAME[:-1]))


def test_encode_decode_round_trip_and_checks():
    State = c4.from_moves("2252576253462244111563365343671351441")
    assert c4.decode(c4.encode(State)) == State
    assert c4.encode(c4.gStart) == [" " * 7] * 6
    with pytest.raises(ValueError, match="floats"):
        c4.decode(["X      ", " O     "] + [" " * 7] * 4)
    with pytest.raises(ValueError, match="as many stones"):
        c4.decode(["XX     "] + [" " * 7] * 5)
    with pytest.raises(ValueError):
        c4.decode("not a board")


def test_states_are_hashable_ordered_and_work_with_heapq():
    import heapq

    successors = c4.next_states(c4.from_moves("4453"), X)
    heap = []
    for s in successors:
        heapq.heappush(heap, (0.0, s))  # equal priorities: the states themselves decide
    assert [heapq.heappop(heap)[1] for _ in successors] == sorted(successors)
    assert len({*successors}) == len(successors)


@settings(max_examples=200, deadline=None)
@given(st.randoms(use_true_random=False))
def test_bitboard_from_state_matches_from_moves(rng):
    moves = random_game(rng)
    assert solver.from_state(c4.from_moves(moves)) == solver.from_moves(moves)


# -- heuristic -----------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False), st.booleans())
def test_heuristic_strictly_inside_the_unit_interval(rng, finished_too):
    State = c4.from_moves(random_game(rng, stop_before_end=not finished_too))
    value = c4.heuristic(State)
    assert isinstance(value, float) and -1 < value < 1


def test_heuristic_is_antisymmetric_and_counts_open_lines():
    assert c4.heuristic(c4.gStart) == 0.0
    swap = {X: O, O: X, c4.EMPTY: c4.EMPTY}
    for moves, _ in L3[:50]:
        State = c4.from_moves(moves)
        mirror = tuple(tuple(swap[m] for m in row) for row in State)
        assert c4.heuristic(mirror) == -c4.heuristic(State)
    # two X side by side in the corner: one open line holds both (1 point): 1 / (1 + 20)
    assert c4.heuristic(board("XX.....")) == 1 / 21
    # three: one line with three (4 points), one with two (1 point): 5 / (5 + 20)
    assert c4.heuristic(board("XXX....")) == 5 / 25
    # an O in the line closes it for X
    assert c4.heuristic(board("XXO....")) == 0.0
    # a heavily filled board stays inside
    crowded = board("XXX.XXX", "XXX.XXX", "XXX.XXX", "OOO.OOO", "OOO.OOO", "XXX.XXX")
    assert -1 < c4.heuristic(crowded) < 1


# -- Pons' solver --------------------------------------------------------------

# (weak, centre_first) -> total nodes over the 1,000 positions; Pons publishes the means
# 283.6, 139.7, 222.9 and 107.1 (shared README)
PONS_TOTALS = {
    (False, False): (283_618, 283.6),
    (False, True): (139_659, 139.7),
    (True, False): (222_856, 222.9),
    (True, True): (107_145, 107.1),
}


@pytest.mark.parametrize("weak, centre_first", list(PONS_TOTALS))
def test_solver_reproduces_pons_counts_and_every_score(weak, centre_first):
    total, published_mean = PONS_TOTALS[weak, centre_first]
    nodes = 0
    for moves, score in L3:
        found = solver.solve(solver.from_moves(moves), weak=weak, centre_first=centre_first)
        expected = ((score > 0) - (score < 0)) if weak else score
        assert found.score == expected, moves
        nodes += found.nodes
    assert nodes == total
    assert round(nodes / len(L3), 1) == published_mean


def test_transposition_table_keeps_scores_and_saves_nodes():
    plain = with_table = 0
    for moves, score in L3[:300]:
        board_ = solver.from_moves(moves)
        found = solver.solve(board_, centre_first=True, table={})
        assert found.score == score
        with_table += found.nodes
        plain += solver.solve(board_, centre_first=True).nodes
    assert with_table < plain


def test_solver_details():
    assert solver.CENTRE_FIRST == (3, 2, 4, 1, 5, 0, 6)
    # the score convention: X wins with its 4th stone at once: 22 - 4
    assert solver.solve(solver.from_moves("121212")) == (18, 1)
    # Pons' part 2 example: whatever O plays, X wins with its 7th stone: 7 - 22
    assert solver.score("44455554221") == -15
    assert solver.solve(solver.from_moves(DRAWN_GAME[:-1])).score == 0
    with pytest.raises(ValueError, match="already over"):
        solver.solve(solver.from_state(c4.from_moves("1212121")))
    with pytest.raises(ValueError, match="unknown test set"):
        solver.load_test_set("Test_L2_R1")


def test_game_result_for_the_maximiser():
    for moves, score in L3[:100]:
        State = c4.from_moves(moves)
        sign = (score > 0) - (score < 0)
        expected = sign if c4.to_move(State) == X else -sign
        assert solver.game_result(State) == expected == search_module.game_result(State)
    assert solver.game_result(c4.from_moves("1212121")) == 1
    assert solver.game_result(c4.from_moves(DRAWN_GAME)) == 0


# -- the seed's search ---------------------------------------------------------


def sample_positions(count=12):
    """Test_L3_R1 positions spread over the file (end games: the exact values are cheap)."""
    return [c4.from_moves(moves) for moves, _ in L3[:: 1000 // count]][:count]


def f_for(search, State):
    return search.maxValue if c4.to_move(State) == X else search.minValue


@settings(max_examples=150, deadline=None)
@given(
    st.randoms(use_true_random=False),
    st.integers(0, 3),
    st.sampled_from(["=", "≤", "≥", "<=", ">=", "?"]),
    st.sampled_from(["exact", "above", "below", "far"]),
)
def test_entry_holds_agrees_with_the_exact_value(rng, limit, flag, where):
    """The judge proves entries with null-window searches; it must say exactly what the
    exact value says, for values on, just above, just below and far from it."""
    State = c4.from_moves(random_game(rng, max_moves=rng.randint(4, 30)))
    true = depth_limited_value(State, limit)
    value = {
        "exact": true,
        "above": math.nextafter(true, math.inf),
        "below": math.nextafter(true, -math.inf),
        "far": rng.uniform(-1, 1),
    }[where]
    memo: dict = {}
    assert entry_holds(State, limit, flag, value, memo=memo) == entry_is_sound(flag, value, true)
    assert depth_limited_value(State, limit, memo=memo) == true  # the shared memo holds only proven bounds


def test_store_cache_flags():
    search = SeedSearch()
    State = c4.gStart
    search.store_cache(State, 2, -0.5, 0.5, -0.5)
    assert search.cache[(State, 2)] == (UPPER, -0.5)  # value <= alpha: an upper bound
    search.store_cache(State, 2, -0.5, 0.5, 0.1)
    assert search.cache[(State, 2)] == (EXACT, 0.1)
    search.store_cache(State, 2, -0.5, 0.5, 0.5)
    assert search.cache[(State, 2)] == (LOWER, 0.5)  # value >= beta: a lower bound
    assert search.value_cache(State, 2) == 0.5 and search.value_cache(State, 3) == 0
    assert entry_is_sound("<=", 0.5, 0.2) and entry_is_sound(">=", 0.1, 0.2)
    assert not entry_is_sound("≤", 0.1, 0.2) and not entry_is_sound("=", 0.1, 0.2)
    assert not entry_is_sound("?", 0.1, 0.1)


@pytest.mark.parametrize("limit", [0, 1, 2, 3, 4])
def test_evaluate_is_the_depth_limited_value(limit):
    memo = {}
    for State in sample_positions():
        search = SeedSearch()
        value = search.evaluate(State, limit, f_for(search, State))
        assert value == depth_limited_value(State, limit, memo=memo)
        assert unsound_entries(search.cache, memo=memo) == []


def test_depth_limited_value_leaves_and_singular_extension():
    State = c4.from_moves(DRAWN_GAME[:-1])  # one move left: singular
    assert depth_limited_value(State, 0) == c4.heuristic(State)
    assert depth_limited_value(State, 1) == 0  # the last move is forced and draws
    won = c4.from_moves("1212121")
    assert depth_limited_value(won, 0) == 1 == depth_limited_value(won, 5)
    # a win inside the horizon: X to move wins at once
    assert depth_limited_value(c4.from_moves("121212"), 1) == 1
    # 33 empty cells, O to move after "4453"... X to move: limit 1 is the best heuristic child
    start = c4.from_moves("4453")
    assert depth_limited_value(start, 1) == max(c4.heuristic(s) for s in c4.next_states(start, X))


WINDOWS = [(-1, -0.5), (-0.5, 0.5), (0.5, 1), (-0.2, -0.1), (0.1, 0.2), (-1, 1)]


@pytest.mark.parametrize("variant_name", list(ACCEPTED))
def test_bound_specification_and_sound_caches(variant_name):
    variant = ACCEPTED[variant_name]
    memo = {}
    for State in sample_positions(8):
        for limit in (1, 2, 3):
            true = depth_limited_value(State, limit, memo=memo)
            search = SeedSearch(variant=variant)
            for alpha, beta in WINDOWS:
                got = f_for(search, State)(State, limit, alpha, beta)
                if alpha <= true <= beta:
                    assert got == true
                elif true < alpha:
                    assert got <= alpha
                else:
                    assert got >= beta
                assert unsound_entries(search.cache, memo=memo) == []
            assert search.evaluate(State, limit, f_for(search, State)) == true


def test_warm_cache_needs_fewer_expansions():
    State = sample_positions()[2]
    search = SeedSearch()
    search.evaluate(State, 4, f_for(search, State))
    cold = search.next_states_calls
    search.next_states_calls = 0
    assert search.evaluate(State, 4, f_for(search, State)) == depth_limited_value(State, 4)
    assert search.next_states_calls < cold


@pytest.mark.parametrize("order_depth", [1, 2])
@pytest.mark.parametrize("ordering", ["heapq", "reversed"])
def test_ordering_searches_by_the_cached_values(order_depth, ordering):
    """The successors' values at limit 1 are cached first; the root searched at limit
    1 + order_depth then expands them best first (reversed: worst first), the smaller
    state first among equal values (heapq on (priority, state))."""
    State = c4.from_moves("4453")
    successors = c4.next_states(State, X)
    search = SeedSearch(variant=Variant(ordering=ordering, order_depth=order_depth))
    for s in successors:
        search.evaluate(s, 1, search.minValue)
    values = {s: search.value_cache(s, 1) for s in successors}
    assert len(set(values.values())) > 1
    searched = []
    evaluate = search.evaluate

    def recording(S, limit, f, alpha=-1, beta=1):
        if limit == order_depth:  # the root's successors
            searched.append(S)
        return evaluate(S, limit, f, alpha, beta)

    search.evaluate = recording
    f = search.maxValue
    f(State, 1 + order_depth, -1, 1)
    sign = -1 if ordering == "heapq" else 1
    assert searched[0] == min(successors, key=lambda s: (sign * values[s], s))
    if order_depth == 1:  # nothing cut: every successor, in that order
        assert searched == sorted(successors, key=lambda s: (sign * values[s], s))[: len(searched)]


def test_seed_ordering_reads_the_same_depth_it_searches():
    """The seed's code orders by `value_cache(ns, limit - 1)`: after a round at limit 1
    (successors stored at limit 0), the round at limit 2 finds no value for them and
    searches them in state order."""
    State = c4.from_moves("4453")
    search = SeedSearch()
    search.evaluate(State, 1, search.maxValue)
    search.expanded.clear()
    search.evaluate(State, 2, search.maxValue)
    assert search.expanded[1] == min(c4.next_states(State, X))


def run_deepening(variant, positions, time_limit=float("inf"), max_limit=None):
    """(value, limit, next_states calls, cache, deepening) of each position."""
    results = []
    for State in positions:
        search = SeedSearch(variant=variant)
        empty = 42 - c4.stones(State)
        value, limit = search.pd_evaluate(
            State, time_limit, f_for(search, State), max_limit=empty if max_limit is None else max_limit
        )
        results.append((value, limit, search.next_states_calls, search.cache, search.deepening))
    return results


DECIDED = [c4.from_moves(entry["moves"]) for entry in load_solved_positions() if entry["result"]]


def test_accepted_variants_agree_on_values_and_stay_sound():
    reference = run_deepening(SEED, DECIDED)
    memo = {}
    for name, variant in ACCEPTED.items():
        for (value, limit, _, cache, _), (ref_value, ref_limit, *_) in zip(run_deepening(variant, DECIDED), reference):
            assert (value, limit) == (ref_value, ref_limit), name
            assert unsound_entries(cache, memo=memo) == [], name


def find_difference(bug):
    """How the bug shows on the decided positions: 'value', 'unsound', 'calls', or None."""
    variant = BUGS[bug][0]
    memo = {}
    seen = set()
    for ref, got in zip(run_deepening(SEED, DECIDED), run_deepening(variant, DECIDED)):
        if got[:2] != ref[:2]:
            seen.add("value")
        if variant.key_with_limit and unsound_entries(got[3], memo=memo):
            seen.add("unsound")
        if not variant.key_with_limit and any(not (isinstance(k, tuple) and len(k) == 2) for k in got[3]):
            seen.add("keys")
        if got[2] != ref[2]:
            seen.add("calls")
    return seen


@pytest.mark.parametrize(
    "bug, shows",
    [
        ("flags_swapped", {"unsound"}),
        ("always_exact", {"unsound"}),
        ("key_without_limit", {"keys", "calls"}),
        ("no_cache", {"calls"}),
        ("no_ordering", {"calls"}),
        ("reversed_ordering", {"calls"}),
        ("heuristic_on_finished", {"value"}),
        ("no_singular_extension", {"calls"}),
    ],
)
def test_each_search_bug_differs_from_the_seed(bug, shows):
    assert shows <= find_difference(bug)


def test_ordering_bugs_never_change_values_only_counts():
    reference = run_deepening(SEED, DECIDED)
    for bug in ("no_ordering", "reversed_ordering", "no_cache"):
        got = run_deepening(BUGS[bug][0], DECIDED)
        assert [g[:2] for g in got] == [r[:2] for r in reference], bug
        assert [g[2] for g in got] != [r[2] for r in reference], bug
    # without the cache, every round searches from scratch
    no_cache = run_deepening(BUGS["no_cache"][0], DECIDED)
    assert sum(g[2] for g in no_cache) > sum(r[2] for r in reference)


def test_bugs_that_store_wrong_flags_give_wrong_values_on_narrow_windows():
    """Over many (state, limit, window) searches on a shared cache, both flag bugs return
    a value that breaks the bound specification somewhere; the seed never does."""
    broken = {}
    for name, variant in [
        ("seed", SEED),
        ("flags_swapped", BUGS["flags_swapped"][0]),
        ("always_exact", BUGS["always_exact"][0]),
    ]:
        memo, count = {}, 0
        for State in sample_positions(10):
            search = SeedSearch(variant=variant)
            f = f_for(search, State)
            for limit in (2, 3):
                true = depth_limited_value(State, limit, memo=memo)
                for alpha, beta in WINDOWS + [(-1, 1)]:
                    got = search.evaluate(State, limit, f, alpha, beta)
                    if (
                        (alpha <= true <= beta and got != true)
                        or (true < alpha and got > alpha)
                        or (true > beta and got < beta)
                    ):
                        count += 1
        broken[name] = count
    assert broken["seed"] == 0
    assert broken["flags_swapped"] > 0 and broken["always_exact"] > 0


@pytest.mark.slow
def test_counting_bugs_are_told_apart_from_every_accepted_variant_somewhere():
    """The accepted variants count differently from one another (the nodes check must
    accept any of them), and each bug that only changes counts has a solved position
    where its count matches no accepted variant."""
    bugs = {name: BUGS[name][0] for name in ("no_ordering", "reversed_ordering", "no_cache")}
    told_apart = set()
    for State in DECIDED:
        accepted = next_states_counts(State, ACCEPTED)
        for name, count in next_states_counts(State, bugs).items():
            if count not in accepted.values():
                told_apart.add(name)
    assert told_apart == set(bugs)
    assert len(set(next_states_counts(DECIDED[0], ACCEPTED).values())) > 1
    assert next_states_counts(c4.from_moves("4453"), {"seed": SEED}, limit=2) == {"seed": 8}


class FakeClock:
    """A clock that advances `step` seconds each time it is read."""

    def __init__(self, step):
        self.now, self.step = 0.0, step

    def __call__(self):
        self.now += self.step
        return self.now


def test_deepening_goes_up_from_zero_and_stops_when_decided():
    for entry in load_solved_positions():
        if not entry["result"]:
            continue
        State = c4.from_moves(entry["moves"])
        search = SeedSearch()
        value, limit = search.pd_evaluate(State, 1e9, f_for(search, State))
        assert (value, limit) == (entry["result"], entry["limit"])
        assert [step[0] for step in search.deepening] == list(range(limit + 1))
        assert search.stopped_by == "decided"
        assert search.deepening == deepening_values(State, 42)


def test_deepening_stops_when_the_time_is_up():
    State = c4.from_moves("4453")  # far from decided
    search = SeedSearch(clock=FakeClock(1.0))
    value, limit = search.pd_evaluate(State, 4.5, search.maxValue)
    # the start reads 1; after limits 0..4 the clock reads 2..6, and 6 - 1 > 4.5
    assert search.stopped_by == "time"
    assert [step[0] for step in search.deepening] == list(range(limit + 1))
    assert limit == 4 and value == search.deepening[-1][1] == depth_limited_value(State, 4)


def test_deepening_bugs():
    State = c4.from_moves("4453")
    ignores_time = SeedSearch(variant=BUGS["deepening_ignores_time"][0], clock=FakeClock(1.0))
    ignores_time.pd_evaluate(State, 4.5, ignores_time.maxValue, max_limit=5)
    assert ignores_time.stopped_by == "max_limit" and len(ignores_time.deepening) == 6

    decided = DECIDED[0]
    ignores_decided = SeedSearch(variant=BUGS["deepening_ignores_decided"][0], clock=FakeClock(0.001))
    value, limit = ignores_decided.pd_evaluate(decided, 1e9, f_for(ignores_decided, decided), max_limit=12)
    seed = SeedSearch()
    seed_value, seed_limit = seed.pd_evaluate(decided, 1e9, f_for(seed, decided))
    assert ignores_decided.stopped_by == "max_limit" and limit == 12 > seed_limit
    assert ignores_decided.deepening[: seed_limit + 1] == seed.deepening


def test_best_move_is_deterministic_and_optimal():
    for entry in load_solved_positions():
        State = c4.from_moves(entry["moves"])
        if entry["to_move"] != X:
            continue
        search = SeedSearch(clock=FakeClock(0.001))
        choice = search.best_move(State, 1.0, max_limit=entry["limit"])
        assert choice.state in choice.optimal
        assert choice.state == choice.optimal[0]
        assert list(choice.optimal) == optimal_successors(State, choice.limit)
        assert SeedSearch(clock=FakeClock(0.001)).best_move(State, 1.0, max_limit=entry["limit"]) == choice
        if entry["result"] == 1:
            assert choice.value == 1
            assert all(depth_limited_value(s, choice.limit - 1) == 1 for s in choice.optimal)
    # best_move's own next_states call is counted
    search = SeedSearch()
    search.best_move(c4.from_moves("4453"), 0.0, max_limit=0)
    assert search.expanded[0] == c4.from_moves("4453") and search.next_states_calls == 1


def test_single_successor_choice():
    State = c4.from_moves(DRAWN_GAME[:-1])  # 41 stones: O plays the last
    last = c4.from_moves(DRAWN_GAME)
    assert optimal_successors(State, 1) == [last]


# -- game-theoretic results: the `solved` positions ----------------------------


@pytest.mark.timing
def test_solved_positions_are_solved_by_the_seed_search():
    positions = load_solved_positions()
    assert 10 <= len(positions) <= 20
    kinds = {(p["to_move"], p["result"]) for p in positions}
    assert kinds == {(X, 1), (X, -1), (O, 1), (O, -1), (X, 0), (O, 0)}
    for entry in positions:
        State = c4.from_moves(entry["moves"])
        assert solver.game_result(State) == entry["result"]
        assert entry["moves"] in dict(L3)
        # the time limits are seconds of the lab's virtual clock (the search's counts, not the machine's speed)
        search = timed_search(SEED, VirtualClock())
        if entry["result"]:
            value, limit = search.pd_evaluate(State, 2.0, f_for(search, State))
            assert search.stopped_by == "decided"
            assert (value, limit, search.next_states_calls) == (
                entry["result"],
                entry["limit"],
                entry["next_states_calls"],
            )
        else:
            value, limit = search.pd_evaluate(State, 0.3, f_for(search, State))
            assert value == 0 and limit >= entry["limit"]


def test_solved_positions_file_is_what_the_criterion_picks():
    assert search_module.pick_solved_positions()["positions"] == load_solved_positions()
