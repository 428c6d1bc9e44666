"""The agents lab graded end to end: fixture submissions (tests/fixtures/agents) through real
worker processes and notebook kernels, the skeleton and the reference solution, the spec
and its verification, what travels to the student's process, and the matches.

Fixtures are graded against the bundled spec with shorter matches (two games each, one
per side, and two in each hidden random match) to keep this file fast: a match's games
cost most of an accepted variant's grading, and a bug that loses games loses one of two.
The reference solution and the chapter's code are graded against the whole spec. Every
bug fixture loses points exactly in the kinds `reference.agents.BUGS` says it must
(`Variant.fails`), plus `random` (the hidden positions show every bug too, for the fixed
seed).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from grader.exercises import exercise_notebook_path, exercise_notebook_text, exercise_path, exercise_text
from grader.grading import grade_submission
from grader.labs import get_lab
from grader.labs.agents.adapter import ENVS_MODULE
from grader.labs.agents.cases import Position
from grader.labs.agents.hints import depth_hint, depth_steps
from grader.labs.agents.plans import bounds_plan
from grader.labs.agents.random_cases import random_matches, random_positions
from grader.paths import SOLUTIONS_DIR
from grader.results import GradeReport
from grader.spec import SpecError, load_spec, spec_path
from reference.agents import BUGS, VARIANTS, true_payoff

from .notebook_builder import notebook_from_py, student_notebook

FIXTURES = Path(__file__).parent / "fixtures" / "agents"
SEED = 1
EVERY_KIND = {"load", "value", "bounds", "nodes", "choice", "games", "speedup", "random", "limits"}
SHORT_GAMES = 2


@pytest.fixture(scope="module")
def lab():
    return get_lab("agents")


@pytest.fixture(scope="module")
def spec():
    return load_spec(spec_path("agents"))


@pytest.fixture(scope="module")
def short_spec(spec):
    """The spec with two games per match (one as each side), the random matches too."""
    cases = []
    for case in spec.cases:
        if "match" in case:
            case = type(case)(case)
            case["match"] = type(case["match"])(case["match"])
            case["match"]["games"] = SHORT_GAMES
        cases.append(case)
    assert spec.random is not None
    random = dataclasses.replace(spec.random, params={**spec.random.params, "games": SHORT_GAMES})
    return dataclasses.replace(spec, cases=cases, random=random)


@pytest.fixture(scope="module")
def grade(lab, spec, short_spec):
    reports: dict[tuple[str, bool], GradeReport] = {}

    def grade_once(name: str | Path, full: bool = False) -> GradeReport:
        path = name if isinstance(name, Path) else FIXTURES / f"{name}.py"
        if (str(path), full) not in reports:
            reports[str(path), full] = grade_submission(path, lab, spec if full else short_spec, seed=SEED)
        return reports[str(path), full]

    return grade_once


def failing_kinds(report: GradeReport) -> set[str]:
    return {kind for kind, (got, most) in report.subtotals().items() if got < most}


def failures(report: GradeReport, kind: str) -> list[str]:
    return [t.output for t in report.tests if t.kind == kind and not t.passed]


def explain(report: GradeReport) -> str:
    return "\n".join(f"{t.name}: {t.output}" for t in report.tests if not t.passed) or "(no failed test)"


# --- accepted variants ---------------------------------------------------------------------------

# correct_numpy_choice_kwonly: numpy's random picks the move (an np.int64, a whole number),
# keyword-only bounds, a while loop over the moves' index, prints left in
# correct_last_move_in_place: the search plays its last move on the env it was given (a
# copy the caller never reads again), not on a deep copy
CORRECT = (
    "correct_chapter",
    "correct_explicit_max_min",
    "correct_inf_bounds",
    "correct_numpy_choice_kwonly",
    "correct_last_move_in_place",
)


@pytest.mark.parametrize("name", CORRECT)
def test_accepted_variant_gets_full_marks(grade, name):
    report = grade(name)
    assert set(report.subtotals()) == EVERY_KIND
    assert report.score == report.max_score, explain(report)


@pytest.mark.slow
def test_the_reference_solution_gets_full_marks_on_the_whole_spec(grade):
    report = grade(SOLUTIONS_DIR / "agents.py", full=True)
    assert report.score == report.max_score, explain(report)


@pytest.mark.slow
def test_the_chapters_code_gets_full_marks_on_the_whole_spec(grade):
    report = grade("correct_chapter", full=True)
    assert report.score == report.max_score, explain(report)


def test_games_show_a_table_per_opponent_and_side(grade):
    report = grade("correct_chapter", full=True)
    (perfect,) = [t.output for t in report.tests if t.name == "ttt-vs-perfect: games"]
    assert "20 games against the perfect agent" in perfect
    assert "side     win  draw  loss" in perfect
    assert "first" in perfect and "second" in perfect
    assert "0" in perfect.splitlines()[-1]


def test_speedup_reports_steps_not_time(grade):
    """The counts, never the wall time: an unchanged submission's output is the same on
    every run (issue 22)."""
    report = grade("correct_chapter")
    (ttt_first,) = [t.output for t in report.tests if t.name == "ttt-first-move: speedup"]
    assert "30,709 step calls" in ttt_first and "549,945" in ttt_first and "94.4% fewer" in ttt_first
    assert " s " not in ttt_first and "took" not in ttt_first


def test_prints_stay_output(grade):
    assert "winning at once with" in grade("correct_inf_bounds").student_output


# --- classic bugs ---------------------------------------------------------------------------------


def bug_fixture(name: str) -> str:
    return f"bug_{name}"


# the bugs that search (nearly) unpruned cost the most: their whole spec's searches, from
# the empty board
HEAVY = {"no_pruning", "bounds_never_updated", "strict_cutoff"}


@pytest.mark.parametrize(
    "bug", [pytest.param(bug, id=bug.name, marks=[pytest.mark.slow] if bug.name in HEAVY else []) for bug in BUGS]
)
def test_bug_loses_points_in_exactly_its_kinds(grade, bug):
    report = grade(bug_fixture(bug.name))
    assert failing_kinds(report) == set(bug.fails) | {"random"}, explain(report)


NODES_SAY = {
    "no_pruning": "never breaks out of its loop (no pruning at all)",
    "bounds_never_updated": "never records an improvement in alpha or beta (a missing bound update)",
    "strict_cutoff": "cuts off only when alpha > -beta (a strict cut-off)",
}


@pytest.mark.parametrize("name", sorted(NODES_SAY))
def test_a_wrong_count_says_which_bug_makes_it(grade, name):
    first = failures(grade(bug_fixture(name)), "nodes")[0]
    assert "the chapter's algorithm" in first and "`step` calls" in first
    assert NODES_SAY[name] in first, first


@pytest.mark.parametrize("name", ["strict_cutoff", "no_sentinel", "cutoff_not_negated", "sign_not_flipped"])
def test_a_bug_seen_on_every_case_is_the_likely_cause(grade, name):
    report = grade(bug_fixture(name))
    hint = VARIANTS[name].hint
    assert any(f"Likely cause: {hint}" in output for output in failures(report, "nodes")), explain(report)


def test_the_missing_bound_update_and_no_pruning_read_alike(grade):
    report = grade(bug_fixture("bounds_never_updated"))
    named = {d for t in report.tests for d in t.diagnoses}
    assert named == {"no_pruning", "bounds_never_updated"}


# fixtures of mistakes the reference does not replay -> the kinds they lose
UNREPLAYED = {
    # plain minimax with alpha and beta unused: it reads what no_pruning and
    # bounds_never_updated read, so both are named
    "bug_no_alpha_beta": {"nodes", "speedup", "random"},
    # the agent forgets its losing moves: None (tic-tac-toe) or an IndexError (Connect Four)
    # where every move loses, and a forfeited match game where the depth-3 agent gets ahead
    # (the hidden random matches, two games each here, never bring it to such a position)
    "bug_no_move_when_losing": {"choice", "games"},
    # Connect Four's depth test `depth < 0`: one level deeper than asked; the fixed positions'
    # values are the same one level down, so only the counts show it
    "bug_depth_below_zero": {"nodes", "speedup", "random"},
    # the agent plays its last candidate move on env itself: right moves and counts, but the
    # game's env has moved on (the grader's matches rebuild env for every move, so only choice)
    "bug_agent_consumes_env": {"choice", "random"},
}


@pytest.mark.parametrize("name", sorted(UNREPLAYED))
def test_an_unreplayed_mistake_loses_points_in_exactly_its_kinds(grade, name):
    report = grade(name)
    assert failing_kinds(report) == UNREPLAYED[name], explain(report)


def test_an_agent_that_changes_env_is_told_to_leave_it_as_it_was(grade):
    said = failures(grade("bug_agent_consumes_env"), "choice")
    assert said and all("but it changed env itself" in output for output in said), said


def test_a_search_one_level_too_deep_is_told_so_by_its_count(grade):
    report = grade("bug_depth_below_zero")
    said = "Your search makes the chapter's count at depth 4, not 3: it goes one level deeper"
    assert any(said in output for output in failures(report, "nodes")), explain(report)


def test_a_count_of_the_depth_below_is_one_level_shallower_and_others_are_not_a_depth_slip():
    position = Position("conn", (4, 4, 3, 5, 2), 3)
    around = depth_steps(position, -2, -2, "search")
    assert set(around) == {2, 4} and around[2] != around[4]
    assert "count at depth 2, not 3: it goes one level shallower" in depth_hint(position, around[2], around)
    assert depth_hint(position, around[4] + 1, around) == ""
    assert depth_steps(Position("ttt", (1,)), -2, -2, "agent") == {}  # tic-tac-toe has no depth


def test_a_search_without_alpha_and_beta_is_named_as_both_bugs_it_reads_like(grade):
    report = grade("bug_no_alpha_beta")
    named = {d for t in report.tests if not t.passed for d in t.diagnoses}
    assert named == {"no_pruning", "bounds_never_updated"}, explain(report)
    assert all(set(t.diagnoses) == named for t in report.tests if t.kind == "nodes" and t.diagnoses)


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("ttt-every-move-loses: choice", "minimax_ttt(env) returned None, not a move of env.validinputs [3, 6, 8, 9]"),
        ("conn-every-move-loses: choice", "minimax_conn(env, 3) raised IndexError"),
    ],
)
def test_an_agent_must_move_when_every_move_loses(grade, case, says):
    report = grade("bug_no_move_when_losing")
    (test,) = [t for t in report.tests if t.name == case]
    assert not test.passed and says in test.output, test.output
    assert all(t.passed for t in grade("correct_chapter").tests if t.name == case)


def test_an_immediate_win_must_be_taken(grade):
    report = grade(bug_fixture("immediate_win_not_taken"))
    (choice,) = [t.output for t in report.tests if t.name == "win-at-once: choice"]
    assert "3 wins at once: a move that wins at once must be taken" in choice


def test_a_losing_agent_shows_its_lost_games(grade):
    output = failures(grade(bug_fixture("sign_not_flipped")), "games")[0]
    assert "lost, moves" in output and "side     win  draw  loss" in output


def test_no_pruning_fails_the_speedup_by_its_count(grade):
    output = failures(grade(bug_fixture("no_pruning")), "speedup")[0]
    assert "549,945 step calls" in output and "0.0% fewer" in output and "no pruning at all" in output


# --- notebooks --------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", ["correct_chapter", "bug_strict_cutoff", "bug_immediate_win_not_taken"])
def test_notebook_grades_exactly_like_py(tmp_path, lab, short_spec, grade, name):
    """The chapter's imports work in a kernel too (the environments exist before the
    first cell), and the same tests pass and fail."""
    notebook = notebook_from_py(FIXTURES / f"{name}.py", tmp_path / f"{name}.ipynb")
    as_nb = grade_submission(notebook, lab, short_spec, seed=SEED)
    as_py = grade(name)
    assert as_nb.subtotals() == as_py.subtotals(), explain(as_nb)
    assert [(t.name, t.passed) for t in as_nb.tests] == [(t.name, t.passed) for t in as_py.tests]


@pytest.mark.slow
def test_the_solution_notebook_gets_full_marks(tmp_path, lab, short_spec):
    """Saved by Colab (its metadata, attachments, widget state, a drive.mount cell), after
    the course skeleton's cells, which its own cells redefine."""
    skeleton = exercise_notebook_path("agents")
    notebook = student_notebook(SOLUTIONS_DIR / "agents.py", tmp_path / "agents.ipynb", "colab", skeleton)
    report = grade_submission(notebook, lab, short_spec, seed=SEED)
    assert report.score == report.max_score, explain(report)


# --- the skeleton -------------------------------------------------------------------------------------


def test_the_skeleton_loads_and_fails_everything_but_load(grade):
    report = grade(exercise_path("agents"))
    assert failing_kinds(report) == EVERY_KIND - {"load", "limits"}, explain(report)
    assert "NotImplementedError" in failures(report, "value")[0]


def test_the_checked_in_exercises_are_generated_from_the_solution():
    assert exercise_path("agents").read_text() == exercise_text("agents")
    assert exercise_notebook_path("agents").read_text() == exercise_notebook_text("agents")


def test_the_skeleton_imports_the_environments_as_the_chapter_does():
    text = exercise_text("agents")
    assert "from utils.ttt_simple_env import ttt" in text and "from utils.conn_env import conn" in text


# --- the spec and what reaches the student ----------------------------------------------------------


@pytest.mark.slow
# That the stored expectations are the references' is test_specs_verify.py's
# test_specs_verify_exits_0 (`abgrade specs verify` runs lab.verify on specs/agents.yaml and
# names a stale one's line): run once there, not again here (it runs every reference search).


def test_the_spec_holds_the_chapters_figures(spec):
    cases = {c["name"]: c for c in spec.cases}
    assert cases["chapter-example"]["expect"]["steps"] == 9
    assert cases["ttt-first-move"]["expect"]["agent_steps"] == 30_709
    assert cases["ttt-first-move"]["expect"]["unpruned_steps"] == 549_945
    assert cases["ttt-vs-perfect"]["expect"]["reference"] == [0, 20, 0]


def test_requests_carry_inputs_only(lab, spec):
    for plan in lab.plans(spec, SEED):
        if plan.play is not None:
            assert set(plan.request) == {"id"}
            continue
        assert set(plan.request) == {"id", "game", "moves", "calls"}
        for call in plan.request["calls"]:
            assert set(call) <= {"function", "args", "seed", "moves"}, call  # moves: a speed-up's hidden position
            assert call["function"] in lab.api


def test_the_reference_agents_never_reach_the_student_process(lab):
    shipped = "\n".join(source for _, source in lab.probe.modules())
    for name in ("def decide", "def payoff", "def minimax_ttt", "def maximized_payoff_ttt", "optimal_actions"):
        assert name not in shipped
    assert [name for name, _ in lab.probe.extra_modules] == [ENVS_MODULE]


def test_the_shipped_module_answers_to_the_chapters_names(lab):
    import sys
    import types

    saved = {name: sys.modules.get(name) for name in ("utils", "utils.ttt_simple_env", "utils.conn_env")}
    module = types.ModuleType(ENVS_MODULE)
    try:
        sys.modules[ENVS_MODULE] = module
        exec(compile(lab.probe.extra_modules[0][1], "<envs>", "exec"), module.__dict__)
        from utils.conn_env import conn
        from utils.ttt_simple_env import ttt

        env = ttt()
        copy = __import__("copy").deepcopy(env)
        copy.step(5)
        assert env.counter.count == 1 and conn().validinputs == [1, 2, 3, 4, 5, 6, 7]
    finally:
        sys.modules.pop(ENVS_MODULE, None)
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


def test_random_cases_come_from_the_seed(spec):
    assert random_positions(spec, 3) == random_positions(spec, 3)
    assert random_positions(spec, 3) != random_positions(spec, 4)
    positions = random_positions(spec, 3)
    assert {p.game for p in positions} == {"ttt", "conn"}
    assert all(not p.finished for p in positions)
    assert [m.seed for m in random_matches(spec, 3)] == ["random 3", "random 3"]


def test_bound_windows_surround_the_true_payoff(spec):
    for position in random_positions(spec, 9):
        plan = bounds_plan(position)
        v = true_payoff(position.env(), depth=position.depth)
        relations = [r.relation for r in plan.requirements]
        assert relations.count("==") >= 2 and "<=" in relations and ">=" in relations, (v, relations)


SPEC_HEAD = """lab: agents
checks:
  value: {points: 1}
  games: {points: 1}
cases:
"""


@pytest.mark.parametrize(
    "case, problem",
    [
        (
            "  - name: a\n    game: chess\n    moves: []\n    checks: [value]\n    expect: {payoff: 0}\n",
            "must be ttt or conn",
        ),
        (
            "  - name: a\n    game: ttt\n    moves: [1, 1]\n    checks: [value]\n    expect: {payoff: 0}\n",
            "not a legal game",
        ),
        ("  - name: a\n    game: conn\n    moves: []\n    checks: [value]\n    expect: {payoff: 0}\n", "search depth"),
        (
            "  - name: a\n    match: {game: ttt, opponent: depth, games: 2, seed: 1}\n    checks: [games]\n"
            "    expect: {reference: [0, 2, 0]}\n",
            "must be one of perfect, random",
        ),
        ("  - name: a\n    game: ttt\n    moves: [5]\n    checks: [value]\n    expect: {}\n", "expect.payoff"),
    ],
)
def test_a_malformed_case_is_a_spec_error(lab, tmp_path, case, problem):
    path = tmp_path / "agents.yaml"
    path.write_text(SPEC_HEAD + case)
    with pytest.raises(SpecError, match=problem):
        lab.cases(load_spec(path))


def test_verify_names_a_stale_expectation(lab, tmp_path):
    path = tmp_path / "agents.yaml"
    path.write_text(
        SPEC_HEAD + "  - name: a\n    game: ttt\n    moves: [1, 4, 6, 5, 7, 8]\n    checks: [value]\n"
        "    expect: {payoff: 1}\n"
    )
    (problem,) = lab.verify(load_spec(path))
    assert "stored 1, the reference computes 0" in problem
