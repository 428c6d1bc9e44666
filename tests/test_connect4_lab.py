"""The connect4 lab graded end to end: fixture submissions (accepted variants and classic
bugs, as `.py` and as notebooks) through real worker processes, the spec and its
verification, the observer's guard, and the random cases."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.exercises import exercise_notebook_path, exercise_notebook_text, exercise_path, exercise_text
from grader.grading import grade_submission
from grader.labs import get_lab
from grader.labs.connect4.hints import COUNT_BUGS
from grader.labs.connect4.judges import judge_cache
from grader.labs.connect4.random_cases import random_positions
from grader.paths import SOLUTIONS_DIR
from grader.spec import load_spec, spec_path
from reference.games import connect4
from tests.notebook_builder import notebook_from_py, student_notebook

FIXTURES = Path(__file__).parent / "fixtures" / "connect4"
SEED = 7
KINDS = {"load", "value", "bounds", "cache", "nodes", "deepening", "choice", "solved", "random", "limits"}


@pytest.fixture(scope="module")
def lab():
    return get_lab("connect4")


@pytest.fixture(scope="module")
def spec():
    return load_spec(spec_path("connect4"))


_REPORTS: dict = {}


def graded(path, lab, spec):
    """Each submission is graded once per test session (a real worker process each time)."""
    if str(path) not in _REPORTS:
        _REPORTS[str(path)] = grade_submission(path, lab, spec, seed=SEED)
    return _REPORTS[str(path)]


def failing_kinds(report):
    return {kind for kind, (got, most) in report.subtotals().items() if got < most}


def explain(report):
    return "\n".join(f"{t.name}: {t.output}" for t in report.tests if not t.passed) or "(no failed test)"


def diagnoses(report):
    return {d for t in report.tests for d in t.diagnoses}


CORRECT = [
    "correct_seed",
    "correct_sorted",
    "correct_fail_hard",
    "correct_ascii_flags",
    "correct_textbook_fail_soft",  # best from -inf: other bounds cached, other counts
    "correct_one_search_object",  # bound methods of two objects sharing one loop, sorted, '<=' flags
    "correct_count_perf_counter",  # itertools.count rounds, perf_counter by name, a test call at import
    "correct_bitboard_threads",  # its own bitboard win test, best_move on a thread pool
]


@pytest.mark.parametrize("name", CORRECT)
def test_accepted_variants_get_full_marks(name, lab, spec):
    report = graded(FIXTURES / f"{name}.py", lab, spec)
    assert report.score == report.max_score > 0, explain(report)
    assert set(report.subtotals()) == KINDS
    deepening = [t.output for t in report.tests if t.kind == "deepening"]
    assert deepening and all("counts are those of an accepted search" in said for said in deepening), deepening


def test_the_reference_solution_gets_full_marks(lab, spec):
    report = graded(SOLUTIONS_DIR / "connect4.py", lab, spec)
    assert report.score == report.max_score, explain(report)


# fixture -> (the kinds it fails, the classic bug named as its likely cause or None)
BUGS = {
    # choice-in-time: wrong values at the limit the deepening reaches pick a wrong move
    "bug_flags_swapped": ({"value", "bounds", "cache", "nodes", "choice", "random"}, "flags_swapped"),
    "bug_always_exact": ({"value", "bounds", "cache", "nodes", "choice", "random"}, "always_exact"),
    "bug_key_without_limit": ({"cache", "nodes", "deepening", "choice", "solved", "random"}, "key_without_limit"),
    "bug_no_ordering": ({"nodes", "random"}, "no_ordering"),
    "bug_reversed_ordering": ({"nodes", "random"}, "reversed_ordering"),
    "bug_no_cache": ({"cache", "nodes", "random"}, "no_cache"),
    # sound cache, counts of no accepted search (on endgame: the reversed ordering's, by chance)
    "bug_window_not_passed": ({"nodes", "random"}, None),
    # a cached bound re-searched on the narrowed window but stored with the caller's: flags
    # that no accepted search stores (here true ones, '=' where it stores '≤'), other cut-offs later
    "bug_store_callers_window": ({"cache", "nodes", "random"}, None),
    # minValue plays 'X' too: wrong values everywhere, and cache keys no game reaches
    "bug_min_plays_x": (
        {"value", "bounds", "cache", "nodes", "deepening", "choice", "solved", "random"},
        None,
    ),
    # choice-in-time: a deepening that never looks at its time limit gives no move in time
    "bug_deepening_ignores_time": ({"deepening", "choice", "solved"}, "deepening_ignores_time"),
    "bug_deepening_ignores_decided": ({"deepening", "choice"}, "deepening_ignores_decided"),
    # horizon-win: a win exactly at the limit is worth utility (value); choice-one-move: the
    # winning move's value at limit 0 is the heuristic, so the seed's best_move finds no move
    "bug_heuristic_on_finished": (
        {"value", "cache", "nodes", "deepening", "choice", "random"},
        "heuristic_on_finished",
    ),
    # single-move-draw: an extension that costs a ply misses the draw at the limit (value)
    "bug_no_singular_extension": ({"value", "cache", "nodes", "deepening"}, "no_singular_extension"),
    # choice-one-move: ((value, limit), state) when there is one legal move
    "bug_best_move_pair": ({"choice"}, None),
    # best_move deepens on its own and stops after limit 1: its moves are optimal at limit 1,
    # but it stopped early (every choice case but choice-one-move, decided at limit 1)
    "bug_best_move_stops_early": ({"choice"}, None),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BUGS))
def test_classic_bugs_fail_exactly_the_kinds_they_touch(name, lab, spec):
    report = graded(FIXTURES / f"{name}.py", lab, spec)
    kinds, bug = BUGS[name]
    assert set(report.subtotals()) == KINDS
    assert failing_kinds(report) == kinds, explain(report)
    assert 0 < report.score < report.max_score
    if bug:
        assert bug in diagnoses(report), explain(report)
        assert any(f"Likely cause: {lab.bug_hints[bug]}" in t.output for t in report.tests)
    if bug in COUNT_BUGS:  # its deepening's rounds are that search's: named, and judged on its counts
        deepening = [t.output for t in report.tests if t.kind == "deepening"]
        assert all(f"exactly those of {COUNT_BUGS[bug]}" in said for said in deepening), deepening


@pytest.mark.slow
def test_a_best_move_that_stops_deepening_early_loses_choice_where_it_stopped_early(lab, spec):
    """best_move's rounds are the course's (pd_evaluate is right): each case's stop follows
    from the reference's counts on the virtual clock, and the message says where it stopped
    and where it should have. Only the cases decided after limit 1 lose their points."""
    report = graded(FIXTURES / "bug_best_move_stops_early.py", lab, spec)
    choice = {t.name: t for t in report.tests if t.kind == "choice"}
    assert {name for name, t in choice.items() if not t.passed} == {
        "choice-endgame: choice",
        "choice-long-win: choice",
        "choice-in-time: choice",
    }, explain(report)
    assert all(t.passed for t in report.tests if t.kind != "choice"), explain(report)
    text = choice["choice-in-time: choice"].output
    assert "best_move stopped after limit 1" in text and "before the time limit of 0.1 s" in text, text
    assert "those of an accepted search (the course's code with heapq)" in text, text
    assert "that search goes on to limit 6, where its time is up" in text, text
    text = choice["choice-long-win: choice"].output
    assert "that search goes on to limit 8, where its value is decided" in text, text


def test_at_least_five_classic_bugs_are_named(lab, spec):
    named = [bug for _, bug in BUGS.values() if bug]
    assert len(named) >= 5 and set(named) <= set(lab.bug_hints)


@pytest.mark.slow
def test_the_nodes_check_says_which_count_it_saw(lab, spec):
    report = graded(FIXTURES / "bug_no_ordering.py", lab, spec)
    text = next(t.output for t in report.tests if t.name == "centre-5: nodes")
    assert "called next_states 622 times on an empty cache and 622 times on a warm one" in text
    assert "no accepted search makes either count" in text
    assert "653 / 653 (the course's code with heapq, fail-hard); 605 / 605 (sorted with a key)" in text
    assert "exactly the counts of a search without move ordering" in text
    text = next(t.output for t in graded(FIXTURES / "bug_no_cache.py", lab, spec).tests if t.name == "centre-5: nodes")
    assert "a search without the cache" in text


@pytest.mark.slow
def test_a_cache_keyed_without_the_limit_draws_the_state(lab, spec):
    report = graded(FIXTURES / "bug_key_without_limit.py", lab, spec)
    text = next(t.output for t in report.tests if t.kind == "cache" and not t.passed)
    assert "keyed by the state alone, without the limit" in text
    assert "1234567" in text  # the board


@pytest.mark.slow
def test_swapped_flags_show_the_false_claim_on_a_board(lab, spec):
    report = graded(FIXTURES / "bug_flags_swapped.py", lab, spec)
    text = next(t.output for t in report.tests if t.kind == "cache" and not t.passed)
    assert "entries of gCache do not hold" in text and "but the state's value searched to" in text
    assert "1234567" in text


@pytest.mark.slow
def test_deepening_past_the_time_limit_is_stopped_and_said(lab, spec):
    report = graded(FIXTURES / "bug_deepening_ignores_time.py", lab, spec)
    text = next(t.output for t in report.tests if t.name == "deepening-timed: deepening")
    assert "past the time limit of 0.1 s, yet pd_evaluate went on" in text
    assert not any(t.kind == "limits" and not t.passed for t in report.tests)  # the guard, not the case limit


@pytest.mark.slow
@pytest.mark.slow
def test_a_cache_of_boards_no_game_reaches_asks_who_plays(lab, spec):
    report = graded(FIXTURES / "bug_min_plays_x.py", lab, spec)
    text = next(t.output for t in report.tests if t.name == "start: cache")
    assert "a key holds a board no game reaches: 'X' must have as many stones as 'O' or one more" in text
    assert "Does maxValue play gPlayers[0] and minValue gPlayers[1]?" in text


def test_deepening_past_a_decided_value_is_said(lab, spec):
    report = graded(FIXTURES / "bug_deepening_ignores_decided.py", lab, spec)
    text = next(t.output for t in report.tests if t.name == "deepening-decided: deepening")
    assert "the value is decided, yet pd_evaluate went on with limit 7" in text


# fixture -> (a fixed case it now fails, what its output says)
COVERAGE = {
    "bug_heuristic_on_finished": ("horizon-win: value", "returned 0.3548387096774194; the depth-limited value is 1."),
    "bug_no_singular_extension": (
        "single-move-draw: value",
        "returned 0.16666666666666666; the depth-limited value is 0.",
    ),
    "bug_deepening_ignores_time": ("choice-in-time: choice", "was stopped by the grader"),
    "bug_best_move_pair": ("choice-one-move: choice", "Its value is (1, 1); the position's value at limit 1 is 1."),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COVERAGE))
def test_the_fixed_cases_catch_what_only_cache_counts_and_random_cases_did(name, lab, spec):
    """A win at the limit scored with the heuristic and an extension that costs a ply lose
    `value` points on a fixed case; a deepening blind to its time limit and a pair in place
    of the value with one legal move lose `choice` points."""
    report = graded(FIXTURES / f"{name}.py", lab, spec)
    test_name, says = COVERAGE[name]
    (test,) = [t for t in report.tests if t.name == test_name]
    assert not test.passed and says in test.output, test.output
    bug = BUGS[name][1]
    if test.kind == "value" and bug:
        assert f"Likely cause: {lab.bug_hints[bug]}" in test.output


@pytest.mark.slow
@pytest.mark.parametrize("name", ["correct_seed", "bug_deepening_ignores_time"])
def test_notebooks_grade_as_their_py(name, lab, spec, tmp_path):
    """A correct notebook, and a buggy one whose deepening runs into the time limit (the
    case clock in a kernel): the lab's other bugs are judged on the same observations."""
    py = graded(FIXTURES / f"{name}.py", lab, spec)
    target, skeleton = tmp_path / f"{name}.ipynb", exercise_notebook_path("connect4")
    # the correct one as VS Code saves it for a python3.9 kernel, in nbformat 4.0, after the skeleton's cells
    built = student_notebook(FIXTURES / f"{name}.py", target, "vscode_old", skeleton) if "correct" in name else None
    notebook = graded(built or notebook_from_py(FIXTURES / f"{name}.py", target), lab, spec)
    assert failing_kinds(notebook) == failing_kinds(py), explain(notebook)
    assert notebook.score == py.score
    assert diagnoses(notebook) == diagnoses(py)


def test_the_skeleton_loads_and_fails_with_not_implemented(lab, spec):
    report = graded(exercise_path("connect4"), lab, spec)
    assert "load" not in failing_kinds(report)
    assert failing_kinds(report) == KINDS - {"load", "limits"}
    assert "NotImplementedError" in explain(report)


def test_the_checked_in_exercises_are_generated_from_the_solution():
    assert exercise_path("connect4").read_text() == exercise_text("connect4")
    assert exercise_notebook_path("connect4").read_text() == exercise_notebook_text("connect4")


# That the stored expectations are the references' is test_specs_verify.py's
# test_specs_verify_exits_0 (`abgrade specs verify` runs lab.verify on specs/connect4.yaml and
# names a stale one's line): run once there, not again here (it runs every reference search).


def test_expected_answers_never_reach_the_student_process(lab, spec):
    for plan in lab.plans(spec, SEED):
        text = repr(plan.request)
        assert "expect" not in text and "results" not in text and "cold" not in text


def test_random_positions_come_from_the_seed(spec):
    first, again, other = random_positions(spec, 3), random_positions(spec, 3), random_positions(spec, 4)
    assert first == again != other
    for moves, limit in first:
        assert not connect4.finished(connect4.from_moves(moves))
        assert 6 <= len(moves) <= 20 and 2 <= limit <= 4


def test_a_cache_judge_accepts_ascii_flags_and_rejects_a_false_exact_value():
    State = connect4.from_moves("44")
    key = {"state": connect4.encode(State), "limit": 1}
    from reference.connect4_search import depth_limited_value

    true = depth_limited_value(State, 1)
    ok = {"cache": {"entries": [{"key": key, "flag": "<=", "value": true + 0.5}], "size": 1}}
    assert judge_cache([("evaluate", ok, State, 1)]).passed
    wrong = {"cache": {"entries": [{"key": key, "flag": "=", "value": true + 0.5}], "size": 1}}
    verdict = judge_cache([("evaluate", wrong, State, 1)])
    assert not verdict.passed and "claims exactly" in verdict.message


def cache_reports(cold: dict, warm: dict, root: tuple) -> tuple[dict, dict]:
    """The observer's reports of a search's cold and warm caches: the warm report leaves out
    the entries the cold one sent unchanged, counted in `repeated` (the root's is always sent)."""

    def entry(key, stored):
        State, limit = key
        return {"key": {"state": connect4.encode(State), "limit": limit}, "flag": stored[0], "value": stored[1]}

    cold_report = {"entries": [entry(k, v) for k, v in cold.items()], "size": len(cold), "repeated": 0}
    sent = [entry(k, v) for k, v in warm.items() if cold.get(k) != v or k == root]
    warm_report = {"entries": sent, "size": len(warm), "repeated": len(warm) - len(sent)}
    return cold_report, warm_report


@pytest.mark.parametrize(
    "variant", ["seed", "sorted", "fail_hard", "sorted_fail_hard", "previous_round_order", "textbook_fail_soft"]
)
def test_every_accepted_search_s_own_cache_passes_and_one_entry_dropped_with_its_size_fails(variant):
    """The cache check holds the reports to the caches of a search whose counts the student's
    match: each accepted search's own caches pass (without the reference's proofs); the same
    with an entry left out and the size lowered to match fails, naming the missing entry."""
    from grader.labs.connect4.cases import replay
    from grader.labs.connect4.plans import known_searches
    from reference.connect4_search import ACCEPTED

    State, limit = connect4.from_moves("4453"), 4
    search = replay(State, limit, ACCEPTED[variant])
    cold, warm = cache_reports(*search.caches, (State, limit))
    calls = [
        ("evaluate", {"cache": cold, "expansions": search.counts[0]}, State, limit),
        ("warm", {"cache": warm, "expansions": search.counts[1]}, State, limit),
    ]
    verdict = judge_cache(calls, searches=lambda: known_searches(State, limit))
    assert verdict.passed and "exactly the cache of an accepted search" in verdict.message, verdict.message
    root = connect4.encode(State)
    dropped = next(e for e in cold["entries"] if e["key"]["state"] != root)
    cold = dict(cold, entries=[e for e in cold["entries"] if e is not dropped], size=cold["size"] - 1)
    calls[0] = ("evaluate", {"cache": cold, "expansions": search.counts[0]}, State, limit)
    verdict = judge_cache(calls, searches=lambda: known_searches(State, limit))
    assert not verdict.passed and "that search stores is not there" in verdict.message, verdict.message
    assert "the accepted search" in verdict.message
    # an honest search can leave an entry out (a path of evaluate without store_cache): said so, not tampering
    assert "leaves a path without store_cache" in verdict.message and "tampered" not in verdict.message
    # one sound entry more (the root's exact value at a smaller limit): written besides store_cache
    from reference.connect4_search import depth_limited_value

    extra = {"key": {"state": root, "limit": limit - 1}, "flag": "=", "value": depth_limited_value(State, limit - 1)}
    more = dict(whole := cache_reports(*search.caches, (State, limit))[0], size=whole["size"] + 1)
    more["entries"] = [*whole["entries"], extra]
    calls[0] = ("evaluate", {"cache": more, "expansions": search.counts[0]}, State, limit)
    verdict = judge_cache(calls, searches=lambda: known_searches(State, limit))
    assert not verdict.passed and "writes to gCache somewhere besides" in verdict.message, verdict.message
    # every entry sent and each the search's, but another size: no search's report, only a forged one
    whole = cache_reports(*search.caches, (State, limit))[0]
    calls[0] = (
        "evaluate",
        {"cache": dict(whole, size=whole["size"] - 1), "expansions": search.counts[0]},
        State,
        limit,
    )
    verdict = judge_cache(calls, searches=lambda: known_searches(State, limit))
    assert not verdict.passed and "was it tampered with?" in verdict.message, verdict.message
    calls[0] = ("evaluate", {"cache": dict(cold, size="many"), "expansions": search.counts[0]}, State, limit)
    verdict = judge_cache(calls, searches=lambda: known_searches(State, limit))
    assert not verdict.passed and "was it tampered with?" in verdict.message, verdict.message


def test_a_cache_judge_refuses_entries_deeper_than_the_search_and_stops_at_its_budget():
    """A hostile cache must not keep the grader searching: an entry deeper than the call's
    own limit is wrong without a search, and thousands of far-away positions at the full
    limit cost the grader a bounded number of searched positions, then fail."""
    import random

    from grader.labs.connect4 import judges

    State = connect4.from_moves("44")
    deep = {"key": {"state": connect4.encode(State), "limit": 40}, "flag": "=", "value": 0}
    verdict = judge_cache([("evaluate", {"cache": {"entries": [deep], "size": 1}}, State, 3)])
    assert not verdict.passed and "no position of it is searched to 40" in verdict.message
    rng = random.Random(7)
    entries = []
    while len(entries) < 3000:
        moves = "".join(rng.choice("1234567") for _ in range(rng.randint(2, 12)))
        try:
            far = connect4.from_moves(moves)
        except ValueError:
            continue
        entries.append({"key": {"state": connect4.encode(far), "limit": 6}, "flag": "≤", "value": 1.0})
    flood = {"cache": {"entries": entries, "size": len(entries)}}
    verdict = judge_cache([("evaluate", flood, State, 6)])
    assert not verdict.passed and f"more than {judges.SEARCH_BUDGET:,} searched positions" in verdict.message


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(0, 42))
def test_the_judges_heuristic_is_the_games_to_the_last_bit(rng, moves):
    """The judges evaluate the heuristic on bitboards for speed; every value they compare
    with a student's must be the very float the game's own heuristic gives."""
    from grader.labs.connect4.cases import bit_heuristic

    State = connect4.gStart
    for _ in range(moves):
        columns = [c for c in range(7) if State[5][c] == connect4.EMPTY]
        if not columns:
            break
        State = connect4.drop(State, rng.choice(columns), connect4.to_move(State))
    assert bit_heuristic(State) == connect4.heuristic(State)


@settings(max_examples=25, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(0, 30), st.integers(0, 3))
def test_the_judges_memoised_game_gives_the_games_values_and_optimal_moves(rng, moves, limit):
    """judge_choice and a random case's value search on the judges' memoised game (cases.GAME):
    the values and the optimal moves must be the game's own."""
    from grader.labs.connect4.cases import GAME
    from reference.connect4_search import depth_limited_value, optimal_successors

    State = connect4.gStart
    for _ in range(moves):
        columns = [c for c in range(7) if State[5][c] == connect4.EMPTY]
        if not columns or connect4.finished(State):
            break
        State = connect4.drop(State, rng.choice(columns), connect4.to_move(State))
    memo: dict = {}
    assert depth_limited_value(State, limit, game=GAME, memo=memo) == depth_limited_value(State, limit)
    if not connect4.finished(State):
        assert optimal_successors(State, limit, game=GAME, memo=memo) == optimal_successors(State, limit)
