"""The likely cause up front (issue 24, point 1) and messages that never contradict themselves
(point 2), on the grader's own parts: how a verdict's cause is placed and which hint
survives a diagnosis (grader/checks/cause.py), the terminal summary that never cuts a block
above its cause, and the count messages that said a failing count was accepted (connect4
`nodes`, negamax `nodes`). Every lab graded end to end: tests/test_feedback_every_lab.py."""

from __future__ import annotations

from grader.checks import Verdict
from grader.checks.cause import cause_lines, explained, with_cause
from grader.labs.connect4.cases import state_of
from grader.labs.connect4.judges import accepted_pairs, judge_nodes
from grader.labs.negamax.cases import Counts, Position
from grader.labs.negamax.judges import nodes_verdict
from grader.report.terminal import MAX_LINES, summary
from grader.results import GradeReport
from grader.results import TestResult as Graded  # (a Test* name would be collected)
from reference.games import load_game
from reference.negamax import alphabeta_value

HINTS = {"strict_cutoff": "cut as soon as alpha >= beta", "no_pruning": "cut off at all"}


# --- where the cause goes, and which hint survives ----------------------------------------------


def test_one_diagnosis_is_said_right_under_the_first_line():
    verdict = Verdict.fail(
        "3 reads; the reference has 2.\nFirst difference at read #3.", ("strict_cutoff",), "prunes less"
    )
    output, cause = explained(verdict, ["strict_cutoff"], HINTS)
    assert output.splitlines() == [
        "3 reads; the reference has 2.",
        "Likely cause: cut as soon as alpha >= beta",
        "First difference at read #3.",
    ]
    assert cause == "Likely cause: cut as soon as alpha >= beta"


def test_a_direction_hint_that_a_diagnosis_explains_is_dropped():
    verdict = Verdict.fail("3 reads.", ("strict_cutoff",), "Your search calls next_states less often: does it cut off?")
    output, _ = explained(verdict, ["strict_cutoff"], HINTS)
    assert "less often" not in output and "Hint" not in output


def test_without_a_diagnosis_the_direction_hint_comes_first():
    verdict = Verdict.fail("3 reads.\nThe tree: ...", ("strict_cutoff",), "prunes less")
    output, cause = explained(verdict, [], HINTS)  # the pipeline kept no bug (not every case agrees)
    assert output.splitlines()[:2] == ["3 reads.", "Hint: prunes less"] and cause == "Hint: prunes less"


def test_bugs_that_read_the_same_are_all_named():
    lines = cause_lines(["no_pruning", "strict_cutoff"], HINTS)
    assert lines[0] == "Likely cause, one of 2 classic bugs that would have done exactly this:"
    assert lines[1:] == ["  - cut off at all", "  - cut as soon as alpha >= beta"]
    assert cause_lines(["mystery"], {}) == ["Likely cause: mystery"]  # a lab without a hint: the name


def test_a_passed_verdict_or_no_cause_leaves_the_text_alone():
    assert explained(Verdict.ok("fine"), ["strict_cutoff"], HINTS) == ("fine", "")
    assert with_cause("one\ntwo", []) == "one\ntwo"
    assert with_cause("", ["Likely cause: x"]) == "Likely cause: x"


# --- the terminal summary keeps the cause ---------------------------------------------------------


def failing(name: str, kind: str, lines: int, cause: str = "") -> Graded:
    body = [f"{name}: line {n}" for n in range(lines)]
    output = with_cause("\n".join(body), cause.splitlines())
    return Graded(name, kind, 1, False, output, cause=cause)


def report_of(tests: list[Graded]) -> GradeReport:
    return GradeReport("tree", "lab.py", [Graded("load", "load", 1, True, "ok"), *tests])


def test_a_long_block_is_cut_below_its_cause_never_above():
    cause = "Likely cause, one of 3 classic bugs that would have done exactly this:\n  - a\n  - b\n  - c"
    tests = [
        failing(f"case {k}: {kind}", kind, 30, cause if k == 0 else "")
        for k in range(3)
        for kind in ("value", "nodes", "pruned", "bounds")
    ]
    text = summary(report_of(tests))
    assert len(text.splitlines()) <= MAX_LINES
    lines = text.splitlines()
    start = lines.index("✗ case 0: value  (0/1)")
    assert lines[start + 1 : start + 6] == ["    case 0: value: line 0", *(f"    {c}" for c in cause.splitlines())]


def test_a_first_failure_listed_on_one_line_keeps_its_cause_under_it():
    kinds = ("value", "nodes", "pruned", "bounds", "choice", "games", "speedup", "cache", "deepening")
    tests = [failing(f"case {k}: {kind}", kind, 20, f"Likely cause: bug of {kind}") for k in range(4) for kind in kinds]
    text = summary(report_of(tests))
    assert len(text.splitlines()) <= MAX_LINES
    for kind in kinds:  # every kind's first failure shows its cause, in a block or under its line
        assert f"Likely cause: bug of {kind}" in text, kind


# --- counts listed as accepted, yet failed (point 2) --------------------------------------------


def test_connect4_says_which_count_is_whose_accepted_search():
    """The issue's flags_swapped case: 117 on an empty cache is one accepted search's count,
    117 warm is no accepted search's; the message says so, and never lists 117 as accepted."""
    State = state_of("")
    pairs = accepted_pairs(State, 4)
    assert pairs["previous_round_order"] == (117, 104)  # the search whose cold count it is
    verdict = judge_nodes(
        {"expansions": 117},
        {"expansions": 117},
        [116, 117, 122, 124],
        [104, 116, 122, 124],
        "evaluate(...)",
        State,
        4,
        lambda: {},
    )
    first, second, third = verdict.message.splitlines()[:3]
    assert not verdict.passed
    assert "117 times on an empty cache and 117 times on a warm one" in first
    assert first.endswith("no accepted search makes both counts.")
    assert second == (
        "Your count on the empty cache (117) is that of an accepted search (ordered by the previous round's "
        "values), which calls next_states 104 times warm: your count warm (117) doesn't fit."
    )
    assert third.startswith(
        "The accepted searches, empty cache / warm: 116 / 116 (the course's code with heapq, fail-hard, "
        "fail-soft from -inf)"
    )
    assert "117 / 104 (ordered by the previous round's values)" in third
    assert "call it 116 or 117" not in verdict.message


def test_connect4_counts_no_accepted_search_makes():
    State = state_of("")
    verdict = judge_nodes(
        {"expansions": 5},
        {"expansions": 7},
        [116, 117, 122, 124],
        [104, 116, 122, 124],
        "evaluate(...)",
        State,
        4,
        lambda: {},
    )
    assert "no accepted search makes either count." in verdict.message.splitlines()[0]
    assert "doesn't fit" not in verdict.message
    assert verdict.hint.startswith("Your search calls next_states less often")  # shown only without a diagnosis


def test_negamax_a_right_count_of_value_calls_is_not_called_expected_when_the_check_fails():
    """num_value_call equals the reference's, the states searched don't: the check fails,
    and the count line no longer says "as expected"."""
    game = load_game("tree")
    position = Position(game, game.start, 0)
    search = alphabeta_value(game, game.start, 0)
    counts = Counts(search.calls, search.next_states_calls, search.trace)
    wrong_order = list(reversed(search.trace))
    observed = {"counter": search.calls, "expansions": len(wrong_order), "expanded": wrong_order, "returned": 0}
    verdict = nodes_verdict(observed, counts, position, "value(Start, 0)")
    assert not verdict.passed
    assert "as expected" not in verdict.message
    assert verdict.message.startswith(
        f"value(Start, 0) called value {search.calls} times, the reference's count, but did not search the "
        f"reference's states:"
    )


def test_a_case_asked_again_names_state_kept_only_when_an_answer_or_its_reads_changed():
    """kit/state.py: the same answers (a cache that remembers results legitimately answers
    the same) say nothing; a tic-tac-toe count carried over, or a tree search that reads
    nothing the second time, says what changed; a call that raised either time is skipped."""
    from grader.labs.kit.state import STATE_HINT, repeat_difference

    triple = {"choice": "o../.../...", "points": 0, "nodes": 59704, "error": None}
    assert repeat_difference("empty-board", [triple], [dict(triple)]) is None
    again = repeat_difference("empty-board", [triple], [{**triple, "nodes": 119408}])
    assert again and "answered nodes 119408, not 59704 as the first time" in again
    reads = {"returned": 4, "reads": ["a", "b", "c"], "error": None}
    said = repeat_difference("seed", [reads], [{**reads, "reads": []}])
    assert said and "read 0 nodes, not the 3 it read the first time" in said
    assert repeat_difference("seed", [reads], [{"error": {"type": "RecursionError"}}]) is None
    assert len(STATE_HINT) <= 130 and "\n" not in STATE_HINT
