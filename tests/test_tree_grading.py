"""Grading of the `tree` lab end to end: correct variants get full marks, each classic bug
loses points in exactly the check kinds it touches (with feedback that names the cause),
and hostile or broken submissions are graded within limits without hurting the grader.

The fixtures live in tests/fixtures/tree. Random cases come from a fixed seed, so every
expectation below is reproducible; `test_bug_expectations_match_the_reference` replays the
classic bugs with the reference to show the expected kinds are not just copied from a run.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.grading import grade_submission
from grader.labs import Lab
from grader.labs.kit.state import STATE_HINT, STATE_KEPT
from grader.report.gradescope import results_json
from grader.results import GradeReport
from grader.results import TestResult as GradedTest  # (a Test* name would be collected)
from grader.sandbox import kernel_zygote, worker_zygote
from grader.spec import Spec, load_spec
from reference.tree_bugs import BUGGY_SEARCHES, DIAGNOSIS_HINTS
from reference.tree_search import alphabeta as reference_alphabeta
from reference.trees import GameTree

TREE_SUBMISSIONS = Path(__file__).resolve().parent / "fixtures" / "tree"
SPEC_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "specs"

SEED = 1


def failing_kinds(report: GradeReport) -> set[str]:
    """Kinds that lost points, read from the per-kind subtotals."""
    return {kind for kind, (got, most) in report.subtotals().items() if got < most}


def failed(report: GradeReport, kind: str | None = None, case: str | None = None) -> list[GradedTest]:
    return [t for t in report.tests if not t.passed and kind in (None, t.kind) and case in (None, t.case)]


def named(report: GradeReport, name: str) -> GradedTest:
    return next(t for t in report.tests if t.name == name)


def explain(report: GradeReport) -> str:
    """Failure text for assertion messages: what the grader said about each failed test."""
    return "\n".join(f"{t.name}: {t.output}" for t in failed(report)) or "(no failed test)"


def source_line(fixture: str, text: str) -> int:
    """1-based line of the first line of a fixture that contains `text`."""
    lines = (TREE_SUBMISSIONS / f"{fixture}.py").read_text().splitlines()
    return next(number for number, line in enumerate(lines, start=1) if text in line)


# --- the shape of a grading run --------------------------------------------------------------


def test_tests_follow_the_spec(grade, tree_spec):
    """One load and one limits test; value/nodes/pruned per fixed case, bounds per case with an
    inner node (not a lone leaf), one random test per generated tree; points from the spec."""
    report = grade("correct_negamax")
    cases = len(tree_spec.cases)
    with_inner_nodes = sum(bool(case["graph"]) for case in tree_spec.cases)
    counts = {kind: sum(t.kind == kind for t in report.tests) for kind in report.subtotals()}
    assert counts == {
        "load": 1,
        "value": cases,
        "nodes": cases,
        "pruned": cases,
        "bounds": with_inner_nodes,
        "random": tree_spec.random.count,
        "limits": 1,
    }
    points = {kind: policy.points for kind, policy in tree_spec.checks.items()}
    assert report.max_score == sum(points[kind] * count for kind, count in counts.items())
    assert all(t.visibility == tree_spec.checks["random"].visibility for t in report.tests if t.kind == "random")
    assert f"seed {SEED}" in " ".join(report.notes)


def test_random_cases_depend_only_on_the_seed(grade, tree_lab, tree_spec):
    again = {t.name: t.output for t in grade("bug_strict_cutoff").tests if t.kind == "random"}
    fresh = grade_submission(TREE_SUBMISSIONS / "bug_strict_cutoff.py", tree_lab, tree_spec, seed=SEED)
    assert {t.name: t.output for t in fresh.tests if t.kind == "random"} == again
    other = {t.name: t.output for t in grade("bug_strict_cutoff", seed=SEED + 1).tests if t.kind == "random"}
    assert other != again


# --- correct variants ------------------------------------------------------------------------

CORRECT = (
    "correct_seed_style",  # prints every step and keeps `alphas_betas`, as the course does
    "correct_fail_hard",  # returns alpha / beta
    "correct_negamax",  # a negamax helper with sign flips
    "correct_max_min_helpers",  # max_value / min_value
    "correct_iterative",  # an explicit stack instead of recursion
    "correct_get_lookups",  # graph.get / terminal_nodes.get to find leaves
    "correct_v_from_alpha",  # v starts at alpha (fail-hard by initialisation)
    "correct_main_guard",  # a self-test print at import, a demo under __main__
    "correct_try_except",  # graph[node] in try/except, an extra optional argument
    "correct_generator_class",  # a bound method, `yield from` the children, a dataclass window
    "correct_numpy_defaults",  # numpy infinities and np.float64 results, default arguments
    "correct_thread_pool",  # searched on a worker thread, recursion limit raised, a breakpoint() left in
    "correct_match_protocol",  # typing.Protocol, a class of static methods, match statements
)


@pytest.mark.parametrize("seed", [SEED, 7])
@pytest.mark.parametrize("name", CORRECT)
def test_correct_variant_gets_full_marks(grade, name, seed):
    report = grade(name, seed=seed)
    assert report.score == report.max_score, explain(report)


@pytest.mark.slow
def test_correct_variants_on_more_random_trees(grade, tree_spec):
    """40 more random trees per variant, from another seed: fail-hard, negamax and iterative
    searches must agree with the reference on every generated tree, not only on two seeds'
    eight. One grading of the 40 a variant, without the fixed cases (the test above grades
    those, and they don't depend on the seed), where five seeds' whole specs once took
    five gradings of the same fixed cases and five student processes."""
    assert tree_spec.random is not None
    more = dataclasses.replace(
        tree_spec,
        cases=[],
        random=dataclasses.replace(tree_spec.random, count=40),
        digest=f"{tree_spec.digest}+40-random-trees",  # the `grade` fixture remembers reports by digest
    )
    for name in CORRECT:
        report = grade(name, seed=100, spec=more)
        assert sum(t.kind == "random" for t in report.tests) == 40
        assert report.score == report.max_score, f"{name}:\n{explain(report)}"


def test_prints_are_kept_as_output_only(grade):
    report = grade("correct_seed_style")
    assert "Expanding Max Node a0" in report.student_output
    assert "Pruning Node" in report.student_output
    assert report.score == report.max_score


# --- classic bugs ----------------------------------------------------------------------------


@dataclass(frozen=True)
class BugCase:
    """A buggy fixture, the kinds it must lose points in (all others keep full marks), the
    classic-bug name the grader should diagnose (None: not one it knows), and per failing
    kind a phrase that the first failed test of that kind must contain."""

    fixture: str
    fails: frozenset[str]
    diagnosis: str | None
    says: dict[str, str]


SEARCH_ORDER = frozenset({"nodes", "pruned", "random"})  # right values, wrong reads
EVERYTHING = frozenset({"value", "nodes", "pruned", "bounds", "random"})
READ_EXTRA = "You read what the reference prunes"

BUGS = (
    # Every search that only prunes less (or elsewhere) still returns true values and meets the
    # bound specification, so value and bounds keep full marks.
    BugCase(
        "bug_no_pruning", SEARCH_ORDER, "no_pruning", {"nodes": "more)", "pruned": READ_EXTRA, "random": READ_EXTRA}
    ),
    BugCase(
        "bug_strict_cutoff",
        SEARCH_ORDER,
        "strict_cutoff",
        {"nodes": "(1 more)", "pruned": "You read what the reference prunes: c4"},
    ),
    # With alpha stuck at -inf (or beta at +inf) no root search can ever cut off.
    BugCase("bug_alpha_never_updated", SEARCH_ORDER, "alpha_never_updated", {"pruned": READ_EXTRA}),
    BugCase("bug_beta_never_updated", SEARCH_ORDER, "beta_never_updated", {"pruned": READ_EXTRA}),
    BugCase(
        "bug_reversed_children",
        SEARCH_ORDER,
        "reversed_children",
        {"pruned": "First difference at read #2: you read b1, the reference reads b0"},
    ),
    # Wrong roles give wrong values, wrong reads, and wrong answers to narrowed windows.
    BugCase(
        "bug_no_alternation",
        EVERYTHING,
        "no_alternation",
        {"value": "returned 9, expected 4", "bounds": "broke the bound specification"},
    ),
    BugCase("bug_min_at_root", EVERYTHING, "min_at_root", {"value": "returned -2.5, expected -3.75"}),
    # Only trees whose MAX nodes are all negative show v = 0: negative-floats and some random
    # trees. There the wrong alpha also prunes c5 too early.
    BugCase(
        "bug_zero_initial_value",
        EVERYTHING,
        "max_starts_at_zero",
        {
            "value": "returned 0, expected -3.75",
            "nodes": "(1 fewer)",
            "pruned": "The reference reads what you never read: c5",
            "bounds": "returned 0",
        },
    ),
    # A window passed on as (beta, alpha): below the root a node starts closed and reads one child.
    BugCase(
        "bug_window_swapped",
        EVERYTHING,
        "window_swapped",
        {"value": "returned 9, expected 4", "nodes": "(12 fewer)", "bounds": "broke the bound specification"},
    ),
    # Children searched on (-inf, inf): right values (a node still cuts on its own bounds, so
    # narrowed windows keep the bound specification), but nothing below prunes on its parent's.
    BugCase(
        "bug_window_not_passed",
        SEARCH_ORDER,
        "window_not_passed",
        {"nodes": "(4 more)", "pruned": "You read what the reference prunes: d4, e7, e8, e14"},
    ),
    # The cut-off tested before the bound takes in the child just read: one child late, values right.
    BugCase(
        "bug_late_cutoff",
        SEARCH_ORDER,
        "late_cutoff",
        {"nodes": "(3 more)", "pruned": "You read what the reference prunes: d4, e7, e14"},
    ),
    # MAX lowers beta, MIN raises alpha: cuts where it must go on, so values go wrong too.
    BugCase(
        "bug_bound_updates_swapped",
        EVERYTHING,
        "bound_updates_swapped",
        {"value": "returned 9, expected 4", "nodes": "(5 fewer)", "bounds": "broke the bound specification"},
    ),
    # Reads nothing; right only on the seed tree's root value.
    BugCase(
        "bug_hardcoded_answer",
        EVERYTHING,
        "hardcoded_answer",
        {"value": "returned 4, expected -3.75", "nodes": "without reading the tree", "bounds": "returned 4"},
    ),
    # Reads exactly like the reference, so nodes and pruned pass; the lone leaf's value too.
    BugCase(
        "bug_returns_none",
        frozenset({"value", "bounds", "random"}),
        None,
        {"value": "returned None, expected 4.\nHint: does every path", "bounds": "returned None"},
    ),
    # The root call's window is (-inf, inf): it can't fail low, so only narrowed windows show it.
    BugCase(
        "bug_bounds_midpoint",
        frozenset({"bounds"}),
        None,
        {"bounds": "returned 5.5, but the true value 4 is below the window, so the result must be <= alpha = 5"},
    ),
    # functools.lru_cache on alphabeta: the self-test at import fills it from the student's own
    # tree, and every later tree with the same node names gets those answers without a read.
    BugCase(
        "bug_lru_cached_search",
        EVERYTHING,
        None,
        {"nodes": "functools.lru_cache or a dict of results keeps another tree's answers", "value": "returned 8"},
    ),
    # A table of values by node name kept at module level: right on the first case, later
    # trees get earlier trees' values; the example asked again reads nothing (kit/state.py).
    BugCase(
        "bug_state_between_calls",
        EVERYTHING,
        "state_between_calls",
        {"value": "Likely cause: Your function keeps state between calls", "nodes": "read 0 nodes, not the 27"},
    ),
    # Move ordering where the tree fixes the order (leaves first): same values, other reads.
    BugCase(
        "bug_move_ordering",
        SEARCH_ORDER,
        None,
        {"nodes": "(2 fewer)", "pruned": "You read b2 before b0, which graph['a0'] lists first"},
    ),
    # An iterative deepening wrapper: its shallow rounds read level by level, and more.
    BugCase(
        "bug_iterative_deepening",
        SEARCH_ORDER,
        None,
        {"pruned": "You read b1 before the reference's c0, deeper in an earlier sibling's subtree"},
    ),
    # The search in a worker process: right values, reads the grader can't see (threads are fine).
    BugCase(
        "bug_process_pool",
        SEARCH_ORDER,
        None,
        {"nodes": "and not in another process (multiprocessing, a ProcessPoolExecutor"},
    ),
    # pdb.set_trace() left in: every call quits at the debugger nobody can type at.
    BugCase(
        "bug_pdb_left_in",
        EVERYTHING,
        None,
        {"value": "raised BdbQuit (a debugger stop, pdb.set_trace(), was left in the code"},
    ),
    # Leaf siblings are read before their turn: more reads, same values.
    BugCase(
        "bug_reads_children_early",
        SEARCH_ORDER,
        None,
        {"nodes": "28 distinct nodes read", "pruned": "You read what the reference prunes: e14"},
    ),
)
ALL_BUGS = [pytest.param(bug, id=bug.fixture) for bug in BUGS]
DIAGNOSED = [pytest.param(bug, id=bug.fixture) for bug in BUGS if bug.diagnosis]
UNDIAGNOSED = [pytest.param(bug, id=bug.fixture) for bug in BUGS if not bug.diagnosis]


@pytest.mark.parametrize("bug", ALL_BUGS)
def test_bug_loses_points_in_exactly_its_kinds(grade, bug):
    report = grade(bug.fixture)
    assert failing_kinds(report) == bug.fails, explain(report)


@pytest.mark.parametrize("bug", ALL_BUGS)
def test_bug_feedback_names_the_cause(grade, bug):
    report = grade(bug.fixture)
    for kind, phrase in bug.says.items():
        first = failed(report, kind)[0]
        assert phrase in first.output, f"{first.name}:\n{first.output}"


@pytest.mark.parametrize("bug", DIAGNOSED)
def test_bug_is_diagnosed_by_name(grade, bug):
    report = grade(bug.fixture)
    pruned_failures = failed(report, "pruned")
    assert pruned_failures
    for test in pruned_failures:
        assert bug.diagnosis in test.diagnoses, test.name
        assert {**DIAGNOSIS_HINTS, STATE_KEPT: STATE_HINT}[bug.diagnosis] in test.output
        assert f"diagnosis:{bug.diagnosis}" in test.tags


@pytest.mark.parametrize("bug", UNDIAGNOSED)
def test_no_classic_bug_is_blamed_for_an_unknown_one(grade, bug):
    report = grade(bug.fixture)
    assert all(not t.diagnoses for t in report.tests), [(t.name, t.diagnoses) for t in report.tests if t.diagnoses]
    assert "Likely cause" not in "".join(t.output for t in report.tests)


def test_pruned_feedback_names_pruned_roots_and_the_whole_set(grade):
    seed_pruned = named(grade("bug_no_pruning"), "seed: pruned")
    assert "Pruning Node -> d4, Pruning Node -> e14" in seed_pruned.output
    assert "pruned set: {d4, e7, e8, e14}" in seed_pruned.output


def test_diagnoses_agree_with_the_values_returned(grade):
    report = grade("bug_no_pruning")
    assert not failed(report, "value")
    assert all("no_alternation" not in t.diagnoses for t in report.tests)


def _reference_failures(bug: str, lab: Lab, spec: Spec) -> set[str]:
    """Which of value/nodes/pruned/random the reference's replay of `bug` gets wrong."""
    failing = set()
    for plan in lab.plans(spec, SEED):
        if plan.kinds == ("bounds",):
            continue
        tree = GameTree.from_mapping(plan.request["graph"], plan.request["terminal_nodes"])
        right, wrong = reference_alphabeta(tree), BUGGY_SEARCHES[bug](tree)
        differs = {
            "value": wrong.value != right.value,
            "nodes": wrong.nodes != right.nodes,
            "pruned": wrong.trace.order != right.trace.order,
        }
        differs["random"] = differs["value"] or differs["pruned"]  # a random test checks both
        failing.update(kind for kind in plan.kinds if differs[kind])
    return failing


@pytest.mark.parametrize("bug", [b for b in DIAGNOSED if b.values[0].diagnosis in BUGGY_SEARCHES])
def test_bug_expectations_match_the_reference(tree_lab, tree_spec, bug):
    assert _reference_failures(bug.diagnosis, tree_lab, tree_spec) == set(bug.fails) - {"bounds"}


# --- hostile and broken submissions -----------------------------------------------------------


def _processes(matches: Callable[[int, int, str], bool]) -> list[int]:
    """Live (non-zombie) processes whose (pid, parent pid, command line) match."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        state, parent = stat[stat.rfind(")") + 2 :].split()[:2]
        if state != "Z" and matches(int(entry.name), int(parent), cmdline):
            found.append(int(entry.name))
    return found


def _left_over(matches: Callable[[int, int, str], bool], wait: float = 30.0) -> list[int]:
    """Processes still matching after `wait` seconds (a SIGKILLed process may take a moment on
    a busy machine; the wait ends as soon as none is left)."""
    deadline = time.monotonic() + wait
    while (found := _processes(matches)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def _my_workers(pid: int, parent: int, cmdline: str) -> bool:
    """Children of this test process, except the helpers that live as long as it does once
    used: the fork server and resource tracker of a batch pool's multiprocessing, the
    kernel zygote of a notebook graded earlier in this process and the worker zygote of a
    batch or zygote test run in it (an earlier test file's: which files come first on a
    pytest worker depends on the suite's order)."""
    helpers = ("multiprocessing.forkserver", "multiprocessing.resource_tracker")
    if parent != os.getpid() or any(helper in cmdline for helper in helpers):
        return False
    zygotes = (kernel_zygote._ZYGOTE, worker_zygote._ZYGOTE)
    return not any(zygote is not None and zygote.alive and pid == zygote.pid for zygote in zygotes)


def _command_lines(pids: list[int]) -> list[str]:
    """What each left-over process is, for the failure's message."""
    lines = []
    for pid in pids:
        try:
            lines.append(f"{pid}: " + Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:300])
        except OSError:
            lines.append(f"{pid}: (gone)")
    return lines


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


@pytest.fixture(scope="module")
def tie_loop(tmp_path_factory, grade, tight_spec):
    """The hanging fixture, copied under a unique name that its helper process carries on its
    command line; graded with the 1 s case limit. Yields (report, unique name)."""
    name = f"tie_loop_{uuid.uuid4().hex[:12]}.py"
    copy = tmp_path_factory.mktemp("tie_loop") / name
    shutil.copyfile(TREE_SUBMISSIONS / "hostile_tie_loop.py", copy)
    report = grade(copy, spec=tight_spec)
    yield report, name
    for pid in _processes(lambda pid, parent, cmdline: name in cmdline):
        os.kill(pid, signal.SIGKILL)  # only ever the helpers this fixture's submission started


@pytest.mark.timing
def test_hang_in_a_case_fails_that_case_and_limits(tie_loop):
    report, _ = tie_loop
    assert failing_kinds(report) == {"value", "nodes", "pruned", "limits"}, explain(report)
    assert {t.case for t in failed(report) if t.case} == {"sibling-ties"}
    for test in failed(report, case="sibling-ties"):
        assert "ran past the time limit of 1 s of CPU time per case" in test.output
    limits = named(report, "limits")
    assert "sibling-ties" in limits.output and "the time limit of 1 s of CPU time per case" in limits.output


@pytest.mark.timing
def test_cases_after_a_hang_run_on_a_fresh_worker(tie_loop):
    report, _ = tie_loop
    after = [t for t in report.tests if t.case == "nothing-to-prune"]
    assert {t.kind for t in after} == {"value", "nodes", "pruned", "bounds"}
    assert all(t.passed for t in after), explain(report)


@needs_proc
@pytest.mark.timing
def test_no_process_outlives_the_grading(tie_loop):
    report, name = tie_loop
    if not re.search(r"helper process \d+ started", report.student_output):
        pytest.skip("the worker could not start a helper process here")
    assert _left_over(lambda pid, parent, cmdline: name in cmdline) == []
    left = _left_over(_my_workers)
    assert left == [], _command_lines(left)


@needs_proc
def test_process_scan_sees_a_live_process():
    """The scan above must be able to fail: it finds a sleeping process by its command line."""
    marker = f"scan_control_{uuid.uuid4().hex[:12]}"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", marker])
    try:
        assert _left_over(lambda pid, parent, cmdline: marker in cmdline, wait=0) == [sleeper.pid]
    finally:
        sleeper.kill()
        sleeper.wait()
    assert _left_over(lambda pid, parent, cmdline: marker in cmdline) == []


@pytest.fixture(scope="module")
def import_loop(tmp_path_factory, grade):
    """The fixture that hangs at import (before it defines alphabeta), graded with a 2 s
    budget for the whole submission."""
    short = tmp_path_factory.mktemp("import_loop") / "short_budget.yaml"
    text = (SPEC_FIXTURES / "tree_tight_limits.yaml").read_text()
    short.write_text(text.replace("submission_seconds: 10", "submission_seconds: 2"))
    return grade("hostile_import_loop", spec=load_spec(short))


@needs_proc
@pytest.mark.timing
def test_hang_at_import_fails_load_within_the_budget(import_loop):
    """The import is interrupted at the load limit and graded with what it had defined:
    here nothing, as the loop comes before alphabeta."""
    load = named(import_loop, "load")
    assert not load.passed
    assert "hostile_import_loop.py: no `alphabeta` is defined" in load.output, load.output
    assert "While loading, the submission raised KeyboardInterrupt" in load.output
    assert import_loop.score == 0
    assert all("did not load" in t.output for t in import_loop.tests if t.kind != "load")
    left = _left_over(_my_workers)
    assert left == [], _command_lines(left)


@pytest.mark.timing
def test_hang_at_import_names_the_limit(import_loop):
    load = named(import_loop, "load")
    says = "the import ran past the time limit of 2 s of CPU time for loading and was interrupted (KeyboardInterrupt)"
    assert says in load.output, load.output


def test_sys_exit_at_import_fails_load_and_says_where(grade):
    report = grade("hostile_exit_at_import")
    load = named(report, "load")
    assert not load.passed and report.score == 0
    line = source_line("hostile_exit_at_import", "    sys.exit()")
    assert "sys.exit()" in load.output
    assert f"hostile_exit_at_import.py:{line}" in load.output


def test_process_exit_in_a_call_fails_only_that_case(grade):
    report = grade("hostile_os_exit_in_call")
    assert failing_kinds(report) == {"value", "nodes", "pruned", "bounds", "limits"}, explain(report)
    assert {t.case for t in failed(report) if t.case} == {"negative-floats"}
    for test in failed(report, case="negative-floats"):
        assert "exited with code 3" in test.output
    assert "negative-floats" in named(report, "limits").output


def test_output_printed_before_a_crash_is_kept(grade):
    assert "fractional leaf" in grade("hostile_os_exit_in_call").student_output


def test_exception_before_the_def_fails_load_naming_file_and_line(grade):
    report = grade("hostile_error_before_def")
    load = named(report, "load")
    assert not load.passed and report.score == 0
    line = source_line("hostile_error_before_def", 'terminal_nodes["a0"]')
    assert "no `alphabeta` is defined" in load.output
    assert "KeyError" in load.output and f"hostile_error_before_def.py:{line}" in load.output


def test_exception_after_the_def_is_a_note_and_grading_goes_on(grade):
    report = grade("hostile_error_after_def")
    load = named(report, "load")
    line = source_line("hostile_error_after_def", 'print("value of a0:"')
    assert load.passed
    assert "Note" in load.output and "KeyError" in load.output
    assert f"hostile_error_after_def.py:{line}" in load.output
    assert report.score == report.max_score, explain(report)


@pytest.mark.timing
def test_runaway_recursion_fails_limits_with_recursion_error(grade, tight_spec):
    report = grade("hostile_recursion_bomb", spec=tight_spec)
    limits = named(report, "limits")
    assert not limits.passed and "RecursionError" in limits.output
    seed_value = named(report, "seed: value")
    assert "RecursionError" in seed_value.output
    assert "hostile_recursion_bomb.py" in seed_value.output
    assert named(report, "load").passed


@pytest.mark.timing
def test_runaway_recursion_is_reported_as_recursion_not_timeout(grade, tight_spec):
    report = grade("hostile_recursion_bomb", spec=tight_spec)
    bounds = named(report, "nothing-to-prune: bounds")
    assert "RecursionError" in bounds.output, bounds.output


def test_object_equal_to_everything_fails_value(grade):
    report = grade("hostile_always_equal")
    assert failing_kinds(report) == {"value", "bounds", "random"}, explain(report)
    seed_value = named(report, "seed: value")
    # Only the object's type name and repr crossed over: the comparison never saw the object.
    assert "returned 4 (a Agreeable), expected the number 4" in seed_value.output


def test_forged_output_changes_nothing(grade):
    forged, honest = grade("hostile_forged_output"), grade("bug_no_pruning")
    assert forged.subtotals() == honest.subtotals()
    assert "PASSED: all tests passed" in forged.student_output
    assert '"score": 1000' in forged.student_output
    results = results_json(forged)
    assert results["score"] == honest.score
    judged = [(t["name"], t["output"]) for t in results["tests"] if t["name"] != "load"]
    assert judged == [(t.name, t.output) for t in honest.tests if t.name != "load"]


def test_flood_of_output_is_truncated_and_changes_nothing(grade, tree_spec):
    report = grade("hostile_flood_output")
    assert report.score == report.max_score, explain(report)
    assert len(report.student_output) < tree_spec.limits.output_bytes + 200
    assert "[output truncated" in report.student_output


def test_file_named_like_a_standard_module_is_graded(grade, tmp_path):
    shadowing = tmp_path / "math.py"
    shutil.copyfile(TREE_SUBMISSIONS / "correct_negamax.py", shadowing)
    report = grade(shadowing)
    assert report.score == report.max_score, explain(report)


def test_vandalised_interpreter_hurts_only_the_student(grade):
    report = grade("hostile_monkeypatch")
    assert report.score == report.max_score, explain(report)


def test_forged_channel_messages_do_not_crash_the_grader(grade):
    report = grade("hostile_channel_forgery")
    assert isinstance(report, GradeReport)


def test_malformed_observations_do_not_crash_the_grader(grade):
    report = grade("hostile_tamper_observer")
    assert report.score < report.max_score


def test_a_fake_infinity_fails_the_huge_and_float_cases(grade):
    """100 used as infinity: the fixed cases with leaves far beyond +-100 (and floats) and
    the random trees (scaled far beyond it) catch it; every other fixed case passes."""
    report = grade("bug_fake_infinity")
    wrong = {(t.case, t.kind) for t in failed(report) if t.kind != "random"}
    assert wrong == {
        ("huge-values", "value"),
        ("huge-values", "nodes"),
        ("huge-values", "pruned"),
        ("huge-values", "bounds"),
        ("floats-beyond-fake-infinity", "value"),
        ("floats-beyond-fake-infinity", "bounds"),
    }, explain(report)
    random = [t for t in report.tests if t.kind == "random"]
    assert sum(not t.passed for t in random) > len(random) / 2  # (a tree may have no leaf but 0)
    assert (
        named(report, "huge-values: value").output
        == "alphabeta('a0', -inf, inf, True) returned -100, expected -999999."
    )
    assert named(report, "floats-beyond-fake-infinity: value").output.startswith(
        "alphabeta('a0', -inf, inf, True) returned 100, expected 250000.25."
    )


def test_random_trees_have_leaves_far_beyond_any_fake_infinity(tree_lab, tree_spec):
    from grader.labs.tree.random_cases import random_trees as _random_trees

    leaves = [v for tree in _random_trees(tree_spec, 5) for v in tree.to_mapping()[1].values()]
    assert any(abs(v) > 1_000_000 for v in leaves) and any(v != int(v) for v in leaves)
    assert all(v == 0 or abs(v) >= 125000.5 for v in leaves)


def test_a_file_error_at_import_names_the_file_but_not_the_graders_folder(grade, tmp_path):
    """A student who reads a data file that isn't there learns which one; the work folder's
    path (the grader's temporary folder) stays out of the message."""
    path = tmp_path / "reads_missing_file.py"
    path.write_text(
        'rows = open("tree_data.csv").read()\n\n\ndef alphabeta(node, alpha, beta, max_player):\n    return 0\n'
    )
    load = named(grade(path), "load")
    assert not load.passed
    assert "FileNotFoundError" in load.output and "No such file or directory: tree_data.csv" in load.output
    assert "abgrade-" not in load.output, load.output
