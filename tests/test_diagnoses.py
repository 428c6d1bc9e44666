"""Every classic bug of the tree lab's table is recognised and named in every output.

`tests/fixtures/diagnoses/<name>.py` is a submission with exactly the bug `<name>` (written in
its own style, not the reference's), and the grader must name that diagnosis and no other:
in `TestResult.diagnoses`, in the terminal summary (its hint), in results.json (the tag
`diagnosis:<name>`) and in the HTML report (`li.diagnosis[data-name]`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from html import escape
from math import inf
from pathlib import Path

import pytest

from grader.grading import _consistent_bugs
from grader.labs import get_lab
from grader.report.gradescope import results_json
from grader.report.html import render_html
from grader.report.terminal import summary
from grader.spec import load_spec
from reference.tree_bugs import BUGGY_CALLS, BUGGY_SEARCHES, DIAGNOSIS_HINTS, HARDCODED_ANSWER, bugs_for, call_with_bug
from reference.tree_search import SearchResult, SearchRules, run_search
from reference.trees import GameTree

from .conftest import PROJECT_DIR

DIAGNOSES = Path(__file__).resolve().parent / "fixtures" / "diagnoses"
NAMES = sorted(DIAGNOSIS_HINTS)


def fixture(name: str) -> Path:
    return DIAGNOSES / f"{name}.py"


def other_hints(name: str) -> list[str]:
    return [hint for other, hint in DIAGNOSIS_HINTS.items() if other != name]


def test_every_diagnosis_has_a_fixture_and_every_fixture_a_diagnosis():
    assert {path.stem for path in DIAGNOSES.glob("*.py")} == set(DIAGNOSIS_HINTS)


def test_the_table_holds_the_classic_bugs_and_the_new_ones():
    assert set(DIAGNOSIS_HINTS) == set(BUGGY_SEARCHES) | {HARDCODED_ANSWER.name}
    assert {"no_pruning", "strict_cutoff", "alpha_never_updated", "beta_never_updated", "reversed_children",
            "no_alternation", "min_at_root", "max_starts_at_zero", "min_starts_at_zero",
            "hardcoded_answer", "window_swapped", "window_not_passed", "late_cutoff",
            "bound_updates_swapped"} == set(DIAGNOSIS_HINTS)  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_hint_is_one_line_for_a_student(name):
    hint = DIAGNOSIS_HINTS[name]
    assert hint and "\n" not in hint and len(hint) <= 130
    assert name not in hint  # plain words, not the grader's identifier


@pytest.mark.parametrize("name", NAMES)
def test_grader_names_exactly_this_diagnosis(grade, name):
    report = grade(fixture(name))
    assert {d for t in report.tests for d in t.diagnoses} == {name}
    carrying = [t for t in report.tests if t.diagnoses]
    assert all(not t.passed for t in carrying), "a diagnosis explains a failure"
    assert any(t.visibility == "visible" for t in carrying), "a student can see it without --show-hidden"
    for test in carrying:
        assert f"Likely cause: {DIAGNOSIS_HINTS[name]}" in test.output, test.name


@pytest.mark.parametrize("name", NAMES)
def test_terminal_summary_gives_exactly_this_hint(grade, name):
    text = summary(grade(fixture(name)))
    assert DIAGNOSIS_HINTS[name] in text
    assert not [hint for hint in other_hints(name) if hint in text]


@pytest.mark.parametrize("name", NAMES)
def test_results_json_tags_exactly_this_diagnosis(grade, name):
    tags = {tag for test in results_json(grade(fixture(name)))["tests"] for tag in test["tags"]}
    assert {tag for tag in tags if tag.startswith("diagnosis:")} == {f"diagnosis:{name}"}


@pytest.mark.parametrize("name", NAMES)
def test_html_report_names_exactly_this_diagnosis(grade, name):
    page = render_html(grade(fixture(name)))
    assert re.findall(r'<li class="diagnosis" data-name="([^"]*)"', page) == [name]
    assert escape(DIAGNOSIS_HINTS[name]) in page
    assert not [hint for hint in other_hints(name) if escape(hint) in page]


def test_an_answer_that_ignores_the_tree_is_hardcoded_only_if_it_is_the_examples(grade, tmp_path):
    """Reading nothing is no classic bug; returning 4 whatever the tree is the hard-coded one."""
    constant = tmp_path / "always_zero.py"
    constant.write_text(
        "graph = {}\nterminal_nodes = {}\n\ndef alphabeta(node, alpha, beta, max_player):\n    return 0\n"
    )
    report = grade(constant)
    assert report.score < report.max_score
    assert not [t.name for t in report.tests if t.diagnoses]


def test_root_reads_alone_cannot_tell_three_bugs_apart_but_narrowed_windows_can():
    """From (-inf, inf) at the root, no search that never cuts, never raises alpha or never
    lowers beta can cut; the bounds probes' narrowed windows separate them (and the grader
    uses the reads of those calls)."""
    tree = GameTree.from_mapping({"a": ["b", "c"], "b": ["d", "e"], "c": ["f", "g"]}, {"d": 3, "e": 5, "f": 2, "g": 9})
    alike = ("no_pruning", "alpha_never_updated", "beta_never_updated")
    assert len({tuple(BUGGY_SEARCHES[name](tree).trace.order) for name in alike}) == 1
    # MIN node b above its value 3: the first leaf lowers beta below alpha, if beta is lowered
    at_min = {name: BUGGY_CALLS[name](tree, "b", 4, inf, False).trace.order for name in alike}
    assert at_min == {
        "no_pruning": ["b", "d", "e"],
        "alpha_never_updated": ["b", "d"],
        "beta_never_updated": ["b", "d", "e"],
    }
    # MAX root below its value 3: the first child raises alpha above beta, if alpha is raised
    at_max = {name: BUGGY_CALLS[name](tree, "a", -inf, 2, True).trace.order for name in alike}
    everything = tree.nodes()
    assert at_max == {
        "no_pruning": everything,
        "alpha_never_updated": everything,
        "beta_never_updated": ["a", "b", "d", "e"],
    }


# --- the four bugs added last, against every case a grading asks -------------------------------

NEWER = ("window_swapped", "window_not_passed", "late_cutoff", "bound_updates_swapped")
Search = Callable[[GameTree, str, float, float, bool], SearchResult]


def judged_as(search: Search, spec_file: Path, seeds: range) -> tuple[set[str], set[str]]:
    """(the check kinds failed, the bugs named) when `search` answers every request of a
    grading (fixed cases, bounds probes, the random trees of each seed), judged by the lab's
    own judges and kept only when consistent with every request, as grading.py does. The
    search runs here rather than in a student process: this is about the replays, not the
    observer (the fixtures above are graded for real)."""
    lab, spec = get_lab("tree"), load_spec(spec_file)
    failed: set[str] = set()
    named: set[str] = set()
    for seed in seeds:
        judgements = []
        for plan in lab.plans(spec, seed):
            tree = GameTree.from_mapping(plan.request["graph"], plan.request["terminal_nodes"])
            answers = [search(tree, *call) for call in plan.request["calls"]]
            observed = [{"returned": a.value, "error": None, "reads": a.trace.order, "seconds": 0.0} for a in answers]
            judgements.append(plan.judge(observed))
        consistent = _consistent_bugs(judgements)
        for judgement in judgements:
            for kind, verdict in judgement.verdicts.items():
                if not verdict.passed:
                    failed.add(kind)
                    named.update(d for d in verdict.diagnoses if consistent is None or d in consistent)
    return failed, named


def replay_of(name: str, cutoff: str) -> Search:
    (bug,) = [bug for bug in bugs_for(cutoff) if bug.name == name]
    return partial(call_with_bug, bug)


def course_search(cutoff: str, fail: str) -> Search:
    rules = SearchRules(cutoff=cutoff, fail=fail)  # type: ignore[arg-type]
    return lambda tree, node, alpha, beta, max_player: run_search(tree, node, alpha, beta, max_player, rules)


BUNDLED, STRICT = PROJECT_DIR / "specs" / "tree.yaml", PROJECT_DIR / "specs" / "examples" / "tree-strict.yaml"


@pytest.mark.parametrize("name", NEWER)
@pytest.mark.parametrize(("spec_file", "cutoff"), [(BUNDLED, ">="), (STRICT, ">")], ids=["bundled", "strict"])
def test_each_newer_bug_alone_explains_its_own_search_on_every_case(name, spec_file, cutoff):
    """The course's example tree and the other fixed cases, their narrowed windows, and the
    hidden random trees of three seeds: the bug's search (written for that course's cut-off)
    loses points and is named as that bug and no other."""
    failed, named = judged_as(replay_of(name, cutoff), spec_file, range(1, 4))
    assert failed and named == {name}


OTHER_WAYS = [(bug.name, index) for bug in bugs_for() for index in range(len(bug.also))]


@pytest.mark.parametrize(("name", "way"), OTHER_WAYS, ids=[f"{name}-{way}" for name, way in OTHER_WAYS])
@pytest.mark.parametrize(("spec_file", "cutoff"), [(BUNDLED, ">="), (STRICT, ">")], ids=["bundled", "strict"])
def test_each_other_way_of_writing_a_bug_is_named_as_that_bug_alone(name, way, spec_file, cutoff):
    """A bug's other common ways (Bug.also: AIMA's `if v >= beta: return v`, each fail-hard
    form of a window bug, a finite sentinel for infinity) read or return otherwise than its
    first way; on every case of three seeds each is named as that bug and no other."""
    (bug,) = [bug for bug in bugs_for(cutoff) if bug.name == name]
    rules = bug.also[way]
    search: Search = lambda tree, node, alpha, beta, max_player: run_search(tree, node, alpha, beta, max_player, rules)  # noqa: E731
    failed, named = judged_as(search, spec_file, range(1, 4))
    assert failed and named == {name}


OTHER_WAY_FIXTURES = sorted((DIAGNOSES / "other_ways").glob("*.py"))


@pytest.mark.parametrize("path", OTHER_WAY_FIXTURES, ids=lambda path: path.stem)
def test_a_window_bug_written_another_way_is_named_in_every_output(grade, path):
    """Real submissions, each a window bug written another way than its fixture above (in
    each way a student writes a fail-hard search, AIMA's cut-off on the value, a finite
    sentinel for a child's window): named as that bug alone, with its hint, in the failed
    tests, the terminal summary, results.json and the HTML report."""
    name = next(bug for bug in NEWER if path.stem.startswith(bug))
    report = grade(path)
    assert {d for t in report.tests for d in t.diagnoses} == {name}
    assert all(f"Likely cause: {DIAGNOSIS_HINTS[name]}" in t.output for t in report.tests if t.diagnoses)
    assert DIAGNOSIS_HINTS[name] in summary(report)
    tags = {tag for test in results_json(report)["tests"] for tag in test["tags"]}
    assert {tag for tag in tags if tag.startswith("diagnosis:")} == {f"diagnosis:{name}"}
    assert re.findall(r'<li class="diagnosis" data-name="([^"]*)"', render_html(report)) == [name]


@pytest.mark.parametrize(
    ("spec_file", "cutoff", "fail"),
    [(BUNDLED, ">=", "soft"), (BUNDLED, ">=", "hard"), (STRICT, ">", "soft"), (STRICT, ">", "hard")],
)
def test_the_course_search_is_never_taken_for_a_bug(spec_file, cutoff, fail):
    """The same cases answered by the course's own search, fail-soft and fail-hard: nothing
    fails, so nothing is named (a diagnosis only ever explains a failure). Under a strict
    cut-off the fail-hard search reads more than the fail-soft one (a clamped child's value
    equals the bound, which `alpha > beta` does not cut on): both are accepted."""
    assert judged_as(course_search(cutoff, fail), spec_file, range(1, 4)) == (set(), set())
