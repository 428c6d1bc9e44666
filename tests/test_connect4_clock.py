"""The connect4 lab's virtual clock (issue 22, point 2): a time-limited deepening is judged
on the work it did, never on the machine's speed or load. The judge's replay of the clock
(pure), the spec's `clock` field and its verification, and real gradings of submissions
that read the time in other ways than the course's `time.time()`."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.grading import grade_submission
from grader.labs import get_lab
from grader.labs.connect4.clock import VirtualClock
from grader.labs.connect4.judges import judge_choice, judge_deepening
from grader.spec import SpecError, load_spec, spec_path
from reference.connect4_search import depth_limited_value, optimal_successors
from reference.games import connect4

FIXTURES = Path(__file__).parent / "fixtures" / "connect4"
CLOCK = VirtualClock()  # 0.1 ms per next_states call, 1 ms per round
EMPTY = connect4.gStart
VALUES = [0.0] * 12  # what the judge compares the rounds' values with (any undecided values do)


def call(ends: list[int], first_began: int = 0, returned: tuple | None = None) -> dict:
    """A pd_evaluate observation on the empty board: round k ended after `ends[k]`
    next_states calls (and k + 1 rounds), the first began after `first_began` calls."""
    top, began = [], [first_began, 0]
    for limit, calls in enumerate(ends):
        ended = [calls, limit + 1]
        top.append([limit, 0.0, began, ended, connect4.encode(EMPTY)])
        began = ended
    last = len(ends) - 1
    pair = returned or (0.0, last)
    return {"top": top, "returned": {"type": "tuple", "items": list(pair)}, "error": None, "stopped": None}


def judged(observation: dict, time_limit: float):
    return judge_deepening(observation, EMPTY, VALUES, time_limit, "pd_evaluate(...)", CLOCK)


def test_a_stop_after_the_first_round_past_the_limit_passes():
    # ends at 0.001, 0.002 + 0.01, ...: round 2 ends at 200 calls + 3 rounds = 0.023 s > 0.02
    verdict, shown = judged(call([0, 100, 200]), 0.02)
    assert verdict.passed, verdict.message
    assert "stopped because the time limit of 0.02 s had passed" in verdict.message


def test_going_on_after_a_round_past_the_limit_fails_and_names_the_clock():
    verdict, shown = judged(call([0, 100, 200, 300]), 0.02)
    assert not verdict.passed and shown == {"deepening_ignores_time"}
    assert "the search at limit 2 ended 0.0230 s after the start (on the grader's clock)" in verdict.message
    assert "0.1 ms per next_states call and 1 ms per call of evaluate" in verdict.message


def test_stopping_before_the_limit_fails():
    verdict, _ = judged(call([0, 100]), 0.02)  # ends at 0.012 s
    assert not verdict.passed
    assert "stopped after limit 1 (0.0120 s after the start on the grader's clock), before the time limit" in (
        verdict.message
    )


@pytest.mark.parametrize("rounds", [2, 3])
def test_a_round_that_ends_exactly_at_the_limit_may_be_the_last_or_not(rounds):
    """`stop - start > time_limit` goes on, `>=` stops: both are the course's rule."""
    ends = [0, 100, 200][:rounds]  # round 1 ends at 100 calls + 2 rounds = 0.012 s
    verdict, _ = judged(call(ends), 0.012)
    assert verdict.passed, verdict.message


def test_the_start_may_be_taken_anywhere_before_the_first_round():
    """best_move's own next_states call comes before pd_evaluate takes its start: judged
    from the latest start, going on is right; from the call's start, stopping is too."""
    # 50 calls before the first round; round 1 ends at 150 calls + 2 rounds: 0.017 s from
    # the call's start, 0.012 s from the first round's
    for ends in ([50, 150], [50, 150, 250]):
        verdict, _ = judged(call(ends, first_began=50), 0.015)
        assert verdict.passed, (ends, verdict.message)


def test_unreadable_counts_are_a_failure_not_a_crash():
    observation = call([0, 100, 200])
    observation["top"][0][2] = "soon"
    verdict, _ = judged(observation, 0.02)
    assert not verdict.passed and "could not be read" in verdict.message


# --- rounds whose counts are a known search's (the reference's counts, not the report's) ---

# each round's next_states calls on the empty board: evaluate(State, k) after 0..k-1 on one cache
SEED_ROUNDS = [0, 1, 8, 33, 116, 504, 1288, 4929]  # the course's code: round 6 ends at 0.202 s
NO_ORDERING_ROUNDS = [0, 1, 8, 28, 124, 433, 1696]  # no accepted search's from round 4 on


def ends_of(rounds: list[int], before: int = 0) -> list[int]:
    """The calls done when each round ended, `before` of them before the first round."""
    ends, done = [], before
    for count in rounds:
        done += count
        ends.append(done)
    return ends


def test_rounds_of_an_accepted_search_are_judged_on_its_counts_without_the_cpu_rule():
    observation = call(ends_of(SEED_ROUNDS[:7]))
    observation["student_cpu_seconds"] = 0.0  # the CPU rule would fail 1,950 claimed calls: the counts are proven
    verdict, _ = judged(observation, 0.1)
    assert verdict.passed, verdict.message
    assert "those of an accepted search (the course's code with heapq)" in verdict.message


def test_a_stop_claimed_by_calls_outside_the_rounds_fails_whatever_the_cpu_time():
    """The seed's rounds at limits 0 and 1, after 1,000 calls the report puts before the
    first round (past the 0.1 s limit from the call's start): the CPU rule alone passed it
    when the process burnt 20 ms; the rounds are the course's, so its clock is replayed."""
    observation = call(ends_of(SEED_ROUNDS[:2], before=1000), first_began=1000)
    observation["student_cpu_seconds"] = 10.0
    verdict, _ = judged(observation, 0.1)
    assert not verdict.passed
    assert "stopped after limit 1 (0.0021 s after the start on the grader's clock), before the time limit" in (
        verdict.message
    )
    assert "the 1,000 calls the report puts outside evaluate's rounds are not counted" in verdict.message


def test_rounds_are_replayed_only_as_far_as_the_guard_lets_a_search_go():
    """At 1 ms a call, the guard stops a search 2.1 s into a 0.1 s limit: 2,100 calls. The
    course's rounds to limit 6 make 1,950 (replayed, and matched); to limit 7, 6,879: no
    genuine search finished them, and the reference stops replaying there."""
    slow = VirtualClock(per_call=0.001)
    for rounds, said in [(7, "those of an accepted search"), (8, "no accepted search's (nor a known bug's)")]:
        verdict, _ = judge_deepening(call(ends_of(SEED_ROUNDS[:rounds])), EMPTY, VALUES, 0.1, "pd_evaluate", slow)
        assert said in verdict.message, (rounds, verdict.message)


def test_rounds_of_a_known_bug_are_named_and_judged_on_its_counts():
    verdict, _ = judged(call(ends_of(NO_ORDERING_ROUNDS)), 0.1)
    assert verdict.passed, verdict.message
    assert "exactly those of a search without move ordering (successors in next_states order)" in verdict.message


def test_rounds_of_no_known_search_keep_the_cpu_rule_and_say_so():
    observation = call(ends_of([0, 1, 8, 30, 120, 500, 1300]))
    observation["student_cpu_seconds"] = 0.01
    verdict, _ = judged(observation, 0.1)
    assert not verdict.passed and "less than those calls take" in verdict.message
    assert "no accepted search's (nor a known bug's)" in verdict.message
    observation["student_cpu_seconds"] = 1.0
    verdict, _ = judged(observation, 0.1)
    assert verdict.passed and "no accepted search's (nor a known bug's)" in verdict.message


# --- best_move's stop (choice): pd_evaluate's rule, on the reference's values -----------


SLOW = VirtualClock(per_call=0.001)  # the empty board's course rounds end at 1, 3, 12, 46, 163 ms: limit 3 stops


def best_move_call(rounds: list[int], before: int = 1) -> dict:
    """A best_move observation on the empty board: its own next_states call (`before`), then
    rounds with these counts, and the first optimal move at the last limit, with its value."""
    observation = call(ends_of(rounds, before), first_began=before)
    limit = len(rounds) - 1
    move = optimal_successors(EMPTY, limit)[0]
    observation["move"] = {"value": depth_limited_value(EMPTY, limit), "state": connect4.encode(move)}
    return observation


def choice(observation: dict):
    return judge_choice(observation, EMPTY, (-1, []), "best_move(...)", 0.02, 8, SLOW)


def test_a_best_move_that_stops_where_its_search_stops_passes():
    verdict = choice(best_move_call(SEED_ROUNDS[:4]))
    assert verdict.passed, verdict.message
    assert "searched to limits 0 to 3" in verdict.message
    assert "those of an accepted search (the course's code with heapq)" in verdict.message
    assert "outside" not in verdict.message and "between" not in verdict.message  # its own call comes first


def test_a_best_move_that_stops_early_fails_and_says_where_its_search_stops():
    """Rounds of the course's search to limit 1 only (an optimal move there): the stop is
    judged on the reference's counts, and 1,000 calls claimed between the rounds (a forger
    saying its time ran out) are not counted, whatever the CPU time the process used."""
    observation = best_move_call(SEED_ROUNDS[:2])
    observation["top"][1][2:4] = [[1001, 1], [1002, 2]]
    observation["student_cpu_seconds"] = 10.0
    verdict = choice(observation)
    assert not verdict.passed
    assert "best_move stopped after limit 1 (0.0030 s after the start on the grader's clock)" in verdict.message
    assert "the 1,000 calls the report puts between evaluate's rounds are not counted" in verdict.message
    assert "On that clock, that search goes on to limit 3, where its time is up." in verdict.message


def test_a_best_move_stop_claimed_on_a_decided_value_needs_the_value_decided():
    observation = best_move_call(SEED_ROUNDS[:2])
    observation["top"][1][1] = 1  # the round's value as the process reports it: X wins
    verdict = choice(observation)
    assert not verdict.passed
    assert "best_move stopped after limit 1" in verdict.message and "with the undecided value 0.0" in verdict.message


def test_a_best_move_that_goes_on_past_its_time_fails():
    verdict = choice(best_move_call(SEED_ROUNDS[:5]))
    assert not verdict.passed
    assert "yet best_move went on with limit 4.\n" in verdict.message
    assert "It should have stopped after limit 3." in verdict.message


def test_best_move_rounds_of_no_known_search_keep_the_cpu_rule_and_say_so():
    observation = best_move_call([0, 1, 9, 30])
    observation["student_cpu_seconds"] = 0.0001
    verdict = choice(observation)
    assert not verdict.passed and "best_move's rounds report 41 calls" in verdict.message
    assert "no accepted search's (nor a known bug's)" in verdict.message
    observation["student_cpu_seconds"] = 1.0
    assert choice(observation).passed
    verdict = choice(best_move_call([0, 1, 9]))
    assert not verdict.passed and "It should have gone on with limit 3 at least." in verdict.message


# --- the spec -------------------------------------------------------------------------


def spec_head() -> str:
    """The bundled spec up to its cases, without its random cases."""
    base = spec_path("connect4").read_text()
    return base[: base.index("\nrandom:")] + "\n"


# the empty board's value at limits 0 to 8
EMPTY_BOARD_VALUES = [0.0, 0.0, 0.0, 0.047619047619047616, 0.0, 0.09090909090909091, 0.0, 0.13043478260869565, -0.047619047619047616]  # fmt: skip


def spec_text(extra: str, time_limit: float = 0.1, max_limit: int = 8) -> str:
    return spec_head() + (
        "cases:\n"
        "  - name: timed\n"
        '    moves: ""\n'
        f"    time_limit: {time_limit}\n"
        f"    max_limit: {max_limit}\n"
        f"{extra}"
        "    checks: [deepening]\n"
        f"    expect: {{values: {EMPTY_BOARD_VALUES[: max_limit + 1]}}}\n"
    )


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ("    clock: {next_states: 0}\n", "cases[0].clock.next_states: must be seconds, more than 0 and at most 1"),
        ("    clock: {ticks: 1}\n", "cases[0].clock: must be a mapping with next_states and/or round"),
    ],
)
def test_a_wrong_clock_is_a_spec_error_with_its_line(tmp_path, extra, problem):
    path = tmp_path / "connect4.yaml"
    path.write_text(spec_text(extra))
    with pytest.raises(SpecError) as caught:
        get_lab("connect4").plans(load_spec(path), 1)
    assert problem in str(caught.value) and str(caught.value).startswith(f"{path}:"), str(caught.value)


def test_verify_says_when_an_accepted_search_would_not_stop_in_time(tmp_path):
    path = tmp_path / "connect4.yaml"
    # far past what limit 6 takes on the clock (limit 8's searches cost 13 times limit 6's)
    path.write_text(spec_text("", time_limit=9, max_limit=6))
    problems = get_lab("connect4").verify(load_spec(path))
    assert problems and all("raise max_limit or lower time_limit" in p for p in problems), problems
    assert "'seed' is still deepening at limit 6" in problems[0]


@pytest.mark.timing
def test_a_faster_clock_searches_deeper_and_is_replayed_with_its_own_rates(tmp_path):
    path = tmp_path / "connect4.yaml"
    path.write_text(spec_text("    clock: {next_states: 0.00001, round: 0.0001}\n"))
    report = grade_submission(FIXTURES / "correct_seed.py", get_lab("connect4"), load_spec(path), seed=1)
    deepening = next(t for t in report.tests if t.kind == "deepening")
    assert deepening.passed, deepening.output
    assert "searched to limits 0 to 8" in deepening.output  # 0 to 6 at the default rates


# --- the student's clocks ------------------------------------------------------------

READINGS = {
    "perf_counter by name": ("from time import perf_counter", "perf_counter()"),
    "monotonic_ns": ("import time", "time.monotonic_ns() / 1e9"),
    "process_time": ("import time as t", "t.process_time()"),
    "clock_gettime": ("import time", "time.clock_gettime(time.CLOCK_MONOTONIC)"),
}


@pytest.fixture(scope="module")
def timed_spec(tmp_path_factory):
    """The bundled spec's timed cases only (deepening, choice, solved)."""
    base = spec_path("connect4").read_text()
    head, cases = spec_head(), base[base.index("\ncases:") + 1 :]
    blocks = cases.split("\n  - name: ")
    kept = [b for b in blocks[1:] if any(k in b for k in ("[deepening]", "[choice]", "[solved]"))]
    path = tmp_path_factory.mktemp("spec") / "connect4.yaml"
    path.write_text(head + "cases:\n" + "".join(f"  - name: {b.rstrip()}\n" for b in kept))
    return load_spec(path)


@pytest.mark.slow
@pytest.mark.parametrize("reading", sorted(READINGS))
@pytest.mark.timing
def test_every_clock_of_the_time_module_is_virtual(tmp_path, timed_spec, reading):
    importing, now = READINGS[reading]
    source = (FIXTURES / "correct_seed.py").read_text()
    assert source.count("time.time()") == 2 and "import time\n" in source
    source = source.replace("import time\n", importing + "\n", 1).replace("time.time()", now)
    path = tmp_path / "clocked.py"
    path.write_text(source)
    report = grade_submission(path, get_lab("connect4"), timed_spec, seed=1)
    assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]
    timed = next(t for t in report.tests if t.name == "deepening-timed: deepening")
    assert "searched to limits 0 to 6" in timed.output, timed.output
