"""Same code, same grade (issue 22, point 1): `abgrade grade` and `abgrade check` without
`--seed` draw the hidden random cases from the spec's own seed (or abgrade.yaml's
`seed:`), never a fresh one, so that every run of one file gives the same tests and score
(five runs of the tree lab's, two of the other labs': LABS), for a correct and a buggy file
of every lab. `--seed N` still overrides."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml

from grader.exercises import exercise_notebook_path
from grader.grading import grade_submission
from grader.labs import get_lab
from grader.seeding import SEED_LIMIT, Seed, chosen_seed, spec_seed
from grader.spec import load_spec, spec_path

from .notebook_builder import student_notebook

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"
PROJECT = TESTS.parent

# lab -> (a correct file, a buggy file, how many runs): every lab. A fresh seed per run
# would show in the second run (the buggy files fail random cases, each on its own
# draw), and a third run repeats the second's evidence: the tree lab, which costs least,
# runs five times as the check does, the others twice. That the grades don't move
# with the machine's load is tests/test_load_independence.py's to show. Each buggy file
# fails random cases and costs little: connect4's (a cache key without the depth limit)
# fails all four random cases, at three quarters of the unordered search's time.
LABS = {
    "tree": ("tree/correct_fail_hard.py", "tree/bug_strict_cutoff.py", 5),
    "tictactoe": ("tictactoe/correct_fail_hard.py", "tictactoe/bug_strict_cutoff.py", 2),
    "negamax": ("negamax/fail_hard.py", "negamax/strict_cutoff.py", 2),
    "connect4": ("connect4/correct_fail_hard.py", "connect4/bug_key_without_limit.py", 2),
    "agents": ("agents/correct_chapter.py", "agents/bug_sign_not_flipped.py", 2),
}
# The agents lab's full spec costs over a minute a grading on a busy machine: its first
# moves and 20-game matches don't depend on the seed, so they are left out here; two
# random positions (each failed one is shrunk, the costly part of a buggy file's grading)
# and both random matches (two games each) stay.
SEED_FREE_AGENTS_CASES = {"ttt-first-move", "conn-first-move", "ttt-vs-perfect", "ttt-vs-random", "conn-vs-depth-3"}


def spec_options(lab: str, folder: Path) -> tuple[object, ...]:
    """`--spec FILE` for a lab graded on a lighter spec here, else nothing (the bundled spec)."""
    if lab != "agents":
        return ()
    raw = yaml.safe_load(spec_path("agents").read_text())
    raw["cases"] = [case for case in raw["cases"] if case["name"] not in SEED_FREE_AGENTS_CASES]
    raw["random"]["games"] = 2
    raw["random"]["count"] = 2
    path = folder / "agents_light.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return ("--spec", path)


def abgrade(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600
    )


def comparable(results: dict, printed: str | None = None) -> tuple:
    """The score and the test list of a results.json; given what the command `printed`,
    also the whole rest of results.json but its time, and that: every output of a grading,
    to compare byte for byte."""
    if printed is None:
        return results["score"], json.dumps(results["tests"], sort_keys=True)
    rest = {key: value for key, value in results.items() if key not in ("execution_time", "tests")}
    return results["score"], json.dumps(results["tests"], sort_keys=True), json.dumps(rest, sort_keys=True) + printed


def graded_runs(tmp_path: Path, lab: str, submission: Path, runs: int) -> list[tuple]:
    seen = []
    spec = spec_options(lab, tmp_path)
    for run in range(runs):
        out = tmp_path / f"{submission.stem}-{run}.json"
        done = abgrade("grade", submission, "--lab", lab, *spec, "--json", out, cwd=tmp_path)
        assert done.returncode in (0, 1), done.stderr
        seen.append(comparable(json.loads(out.read_text()), done.stdout))
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("lab", list(LABS))
def test_grade_without_seed_gives_the_same_tests_and_score_every_run(tmp_path, lab):
    correct, buggy, runs = LABS[lab]
    for name, full_marks in ((correct, True), (buggy, False)):
        seen = graded_runs(tmp_path, lab, FIXTURES / name, runs)
        assert all(one == seen[0] for one in seen), f"{name}: {[score for score, _, _ in seen]}"
        score, tests, _ = seen[0]
        assert (score == sum(t["max_score"] for t in json.loads(tests))) == full_marks, name


@pytest.mark.slow
@pytest.mark.parametrize("lab", ["agents", "tree"])
def test_a_notebook_with_every_habit_gets_full_marks_and_the_same_results_twice(tmp_path, lab):
    """The solution as a student leaves it with every habit at once (notebook_builder's
    `every`: an `@interact` cell, display, tqdm, %%bash, breakpoint(), sys.exit(), Colab's
    and VS Code's metadata), after the course skeleton's cells: once it scored 0/104 on a
    loaded machine (an `@interact` cell's reply was never seen, tests/test_notebook_widgets.py)
    and 104/104 on the reruns."""
    solution = PROJECT / "reference" / "solutions" / f"{lab}.py"
    notebook = student_notebook(solution, tmp_path / f"{lab}.ipynb", "every", exercise_notebook_path(lab))
    runs = []
    for run in range(2):
        out = tmp_path / f"{lab}-{run}.json"
        done = abgrade("grade", notebook, "--lab", lab, *spec_options(lab, tmp_path), "--json", out, cwd=tmp_path)
        assert done.returncode in (0, 1), done.stderr
        # all of results.json but its time and what the code printed (its %time and %timeit
        # cells print the times they measured, its %debug the kernel's temporary file, so the
        # output limit's count of bytes shown moves by a few), and all the command printed
        results = json.loads(out.read_text())
        runs.append({key: results[key] for key in results if key not in ("execution_time", "output")})
        runs[-1]["terminal"] = done.stdout
        for test in runs[-1]["tests"]:
            test["output"] = re.sub(r"output limit: [\d,]+ bytes shown", "output limit", test["output"])
    assert runs[0] == runs[1], [run["score"] for run in runs]
    assert runs[0]["score"] == sum(test["max_score"] for test in runs[0]["tests"]), runs[0]["terminal"]


def test_the_spec_seed_is_the_spec_texts_and_the_note_says_how_to_rerun(tmp_path):
    spec = load_spec(spec_path("tree"))
    seed = spec_seed(spec)
    assert seed == spec_seed(load_spec(spec_path("tree"))) and 0 <= seed.value < SEED_LIMIT
    edited = tmp_path / "tree.yaml"
    edited.write_text(spec_path("tree").read_text().replace("count: 8", "count: 7"))
    assert spec_seed(load_spec(edited)).value != seed.value  # another spec, other hidden cases
    assert spec_seed(load_spec(spec_path("negamax"))).value != seed.value
    assert seed.note() == (
        f"random cases generated with seed {seed.value} (the spec's own; rerun with --seed {seed.value})"
    )
    assert chosen_seed(3, 4, spec) == Seed(3, "given with --seed")
    assert chosen_seed(None, 4, spec) == Seed(4, "abgrade.yaml's")
    assert chosen_seed(None, None, spec) == seed
    secret = Seed(123456789, "the bundle's", secret=True)
    assert "123456789" not in secret.note() and "same score" in secret.note()


def test_grade_takes_the_seed_from_abgrade_yaml_and_seed_overrides_it(tmp_path):
    submission = FIXTURES / "tree" / "bug_strict_cutoff.py"
    spec_value = spec_seed(load_spec(spec_path("tree"))).value
    course = tmp_path / "course"
    (course / "labs").mkdir(parents=True)
    bare = abgrade("grade", submission, "--lab", "tree", cwd=course / "labs")
    assert f"seed {spec_value} (the spec's own; rerun with --seed {spec_value})" in bare.stdout
    (course / "abgrade.yaml").write_text("labs:\n  tree: labs/tree.py\nseed: 4242\n")
    configured = abgrade("grade", submission, "--lab", "tree", cwd=course / "labs")
    assert "seed 4242 (abgrade.yaml's; rerun with --seed 4242)" in configured.stdout
    given = abgrade("grade", submission, "--lab", "tree", "--seed", 7, cwd=course / "labs")
    assert "seed 7 (given with --seed; rerun with --seed 7)" in given.stdout
    (course / "abgrade.yaml").write_text("labs:\n  tree: labs/tree.py\nseed: soon\n")
    bad = abgrade("grade", submission, "--lab", "tree", cwd=course / "labs")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith(f"abgrade: {course / 'abgrade.yaml'}:3: seed: must be a whole number"), bad.stderr


def test_check_draws_visible_random_cases_from_the_spec_seed_or_the_configured_one(tmp_path):
    """A course spec may make random cases visible: `check` runs them, from the same seed
    on every run (the spec's, abgrade.yaml's or --seed)."""
    spec = tmp_path / "tree.yaml"
    spec.write_text(spec_path("tree").read_text().replace("visibility: after_published", "visibility: visible"))
    (tmp_path / "tree.py").write_text((FIXTURES / "tree" / "bug_strict_cutoff.py").read_text())
    (tmp_path / "abgrade.yaml").write_text("labs:\n  tree: {submission: tree.py, spec: tree.yaml}\n")

    def random_tests(*extra: object) -> dict[str, str | None]:
        """Each random test of a `check` run: its failure message, None when it passed."""
        junit = tmp_path / "junit.xml"
        done = abgrade("check", "--junit", junit, *extra, cwd=tmp_path)
        assert done.returncode == 1, done.stdout + done.stderr
        cases = ElementTree.parse(junit).getroot().iter("testcase")
        return {
            case.attrib["name"]: None if case.find("failure") is None else case.find("failure").attrib["message"]
            for case in cases
            if case.attrib["name"].startswith("random ")
        }

    first = random_tests()
    assert len(first) == 8 and random_tests() == first
    lab, loaded = get_lab("tree"), load_spec(spec)
    other = random_tests("--seed", 99)
    assert other != first  # other trees: other failures
    for seed, shown in ((spec_seed(loaded).value, first), (99, other)):
        expected = grade_submission(tmp_path / "tree.py", lab, loaded, seed=seed, visible_only=True)
        passed = {t.name: t.passed for t in expected.tests if t.kind == "random"}
        assert {name: failure is None for name, failure in shown.items()} == passed


def test_batch_keeps_its_gradebook_seed_its_first_run_takes_abgrade_yaml_and_feedback_never_shows_it(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ann.py").write_text((FIXTURES / "tree" / "bug_strict_cutoff.py").read_text())
    (tmp_path / "abgrade.yaml").write_text("seed: 4242\n")

    def batch(out: str, *extra: object) -> str:
        done = abgrade("batch", folder, "--lab", "tree", "--jobs", 1, "--out", tmp_path / out, *extra, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return done.stdout + done.stderr

    assert "seed 4242 (abgrade.yaml's)" in batch("configured")
    (tmp_path / "abgrade.yaml").write_text("seed: 77\n")  # too late: the class keeps its seed
    assert "seed 4242 (the gradebook's last run's)" in batch("configured")
    assert "seed 77 (abgrade.yaml's)" in batch("configured", "--regrade")
    feedback = (tmp_path / "configured" / "feedback" / "ann.html").read_text()
    assert "own seed (not shown)" in feedback and "seed 77" not in feedback
    (tmp_path / "abgrade.yaml").unlink()
    fresh = batch("fresh")
    assert re.search(r"seed \d+ \(drawn for this class, kept in the gradebook\)", fresh), fresh


@pytest.mark.parametrize("fixture", ["bug_window_swapped", "bug_late_cutoff", "bug_state_between_calls"])
def test_a_diagnosis_never_changes_a_score(monkeypatch, fixture):
    """A likely cause is words beside a verdict: the same file graded with no classic bug to
    replay and no case asked again (so nothing is ever diagnosed) passes and fails exactly
    the same tests. One bug that fails every kind and one that fails only the reads, both
    named (test_diagnoses), and state kept between calls, named from the case asked again
    (grader/labs/kit/state.py)."""
    from grader.labs.tree import hints

    lab, spec = get_lab("tree"), load_spec(spec_path("tree"))
    submission = FIXTURES / "tree" / f"{fixture}.py"
    named = grade_submission(submission, lab, spec, seed=3)
    monkeypatch.setattr(hints, "bug_replays", lambda tree, call, cutoff=">=": {})
    monkeypatch.setattr(type(lab), "repeat_plan", lambda self, candidates: None)
    unnamed = grade_submission(submission, lab, spec, seed=3)
    assert any(t.diagnoses for t in named.tests) and not any(t.diagnoses for t in unnamed.tests)
    assert named.score == unnamed.score < named.max_score
    assert [(t.name, t.passed, t.score) for t in named.tests] == [(t.name, t.passed, t.score) for t in unnamed.tests]


@pytest.mark.parametrize(
    "fixture",
    [
        "correct_fail_hard",
        "bug_strict_cutoff",
        "bug_state_between_calls",
        "hostile_os_exit_in_call",
        "hostile_forged_output",
    ],
)
def test_cases_sent_ahead_grade_as_cases_sent_one_by_one(monkeypatch, fixture):
    """A `.py` worker is sent the next cases while it answers one (grading._ahead,
    sandbox/channel.py): the same file graded with every case sent only when its turn
    comes gets the same results.json, but its time, and the same output, public part
    included. A correct file, a failing one (its random cases shrunk), one that keeps
    state between calls (the case asked again), one that kills its process in one case
    (the cases after it go to a fresh one) and one that prints on every call."""
    from grader import grading
    from grader.report.gradescope import results_json

    lab, spec = get_lab("tree"), load_spec(spec_path("tree"))
    submission = FIXTURES / "tree" / f"{fixture}.py"

    def graded() -> str:
        results = results_json(grade_submission(submission, lab, spec, seed=3))
        results.pop("execution_time")
        return json.dumps(results, sort_keys=True)

    ahead = graded()
    monkeypatch.setattr(grading, "_ahead", lambda spec, later, public: [])
    assert graded() == ahead
