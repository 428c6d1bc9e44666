"""Checks that once passed on a student-side number (issue 23, point 3): the student's
process holds the counters and clocks the observer reads, so a submission can rewrite them.
Each forgery below is graded next to the same submission without it (the honest bug): the
forgery gains nothing. DESIGN.md ("Numbers from the student's process") lists the checks."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from grader.grading import grade_submission
from grader.labs import get_lab
from grader.results import GradeReport
from grader.spec import Spec, load_spec, spec_path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SEED = 1


def only(spec: Spec, names: set[str], **limits: float) -> Spec:
    """`spec` with only the cases `names`, no random cases, and (when given) other limits,
    so that a forgery's slow honest half is judged rather than timed out."""
    cases = [case for case in spec.cases if case["name"] in names]
    assert {case["name"] for case in cases} == names
    return dataclasses.replace(spec, cases=cases, random=None, limits=dataclasses.replace(spec.limits, **limits))


def grade(path: Path, lab: str, spec: Spec) -> GradeReport:
    return grade_submission(path, get_lab(lab), spec, seed=SEED)


def without_forgery(forged: Path, folder: Path, cut: str) -> Path:
    """The same submission with the forgery's lines (from `cut` on, or the line `cut`) gone."""
    text = forged.read_text()
    honest = text.split(cut)[0] if cut.startswith("#") else text.replace(cut, "")
    path = folder / forged.name.replace("forged_", "honest_")
    path.write_text(honest)
    return path


def subtotals(report: GradeReport) -> dict[str, float]:
    return {kind: got for kind, (got, _) in report.subtotals().items()}


def gains(forged: GradeReport, honest: GradeReport) -> dict[str, tuple[float, float]]:
    return {
        kind: (got, subtotals(honest).get(kind, 0.0))
        for kind, got in subtotals(forged).items()
        if got > subtotals(honest).get(kind, 0.0)
    }


# --- agents: `speedup` (and `nodes`) from the env's step counter --------------------------------

SPEEDUP_CASES = {"ttt-first-move", "conn-first-move"}


@pytest.fixture(scope="module")
def speedup_spec() -> Spec:
    # the unpruned first move of tic-tac-toe makes 549,945 steps: give it the time to finish
    return only(load_spec(spec_path("agents")), SPEEDUP_CASES, case_seconds=300, submission_seconds=900)


@pytest.fixture(scope="module")
def no_pruning(speedup_spec) -> GradeReport:
    return grade(FIXTURES / "agents" / "bug_no_pruning.py", "agents", speedup_spec)


@pytest.mark.parametrize("name", ["forged_speedup_divided", "forged_speedup_copied"])
def test_a_forged_step_count_earns_no_speedup(name, speedup_spec, no_pruning):
    """The issue's attack (pruning off, the counter divided by 50: "98.0% fewer" passed) and
    a counter set to the spec's published first-move counts (30,709 and 532): both are the
    unpruned agent's search, and score what it scores."""
    forged = grade(FIXTURES / "agents" / f"{name}.py", "agents", speedup_spec)
    speedup = [t for t in forged.tests if t.kind == "speedup"]
    assert len(speedup) == 2 and not any(t.passed for t in speedup), [t.output for t in speedup]
    assert "exactly the chapter's pruned agent's" in speedup[0].output or "hidden position" in speedup[0].output
    assert gains(forged, no_pruning) == {}
    assert forged.score == no_pruning.score


def test_the_chapters_agent_keeps_its_speedup_with_the_hidden_positions(speedup_spec):
    report = grade(FIXTURES / "agents" / "correct_chapter.py", "agents", speedup_spec)
    assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]
    (ttt,) = [t.output for t in report.tests if t.name == "ttt-first-move: speedup"]
    assert "30,709 step calls" in ttt and "hidden position" in ttt


def test_the_hidden_positions_come_from_the_seed_and_never_make_the_public_count():
    from grader.labs.agents.cases import Position
    from grader.labs.agents.judges import witness_steps
    from grader.labs.agents.plans import speedup_witnesses

    def witnesses(seed: int) -> tuple[Position, ...]:
        return speedup_witnesses("conn-first-move", Position("conn", (), 3), seed, 532)

    assert witnesses(3) == witnesses(3) and witnesses(3) != witnesses(4)
    for seed in range(20):  # Connect Four at depth 3: most early positions make the first move's 532
        assert all(witness_steps(w) != 532 for w in witnesses(seed))
    lab, spec = get_lab("agents"), load_spec(spec_path("agents"))
    speedup = [p for p in lab.plans(spec, 3) if "speedup" in p.kinds]
    assert len(speedup) == 2 and all(p.play is not None for p in speedup)  # the hidden request is asked after


# --- negamax: `nodes` from a record of next_states calls ---------------------------------------


def test_an_emptied_record_of_next_states_calls_gains_nothing(tmp_path):
    """A search in the wrong order whose record of states is emptied after each call: the
    judge once compared a record only as far as it went, leaving the count alone to pass."""
    forged_path = FIXTURES / "negamax" / "forged_record_cleared.py"
    spec = load_spec(spec_path("negamax"))
    forged = grade(forged_path, "negamax", spec)
    honest = grade(without_forgery(forged_path, tmp_path, "# --- the forgery"), "negamax", spec)
    assert gains(forged, honest) == {}
    assert forged.score == honest.score < forged.max_score
    said = [t.output for t in forged.tests if t.kind == "nodes" and not t.passed]
    assert any("Was it tampered with?" in text for text in said), said


# --- connect4: `deepening` from the times of the rounds -----------------------------------------


def honest_half(path: Path) -> tuple[str, str]:
    """A deepening forgery's code but its header and its `_forge` (and `_burn`): the same
    for both forgeries, so one grading of their honest half serves both."""
    text = path.read_text()
    return text[text.index('"""The course') : text.index("def _forge")], text[text.index("def pd_evaluate") :]


def test_a_deepening_that_stops_early_and_rewrites_its_times_gains_nothing(tmp_path):
    """pd_evaluate stops at limit 1, long before its time limit, then rewrites the observer's
    record of its rounds to say the time ran out: its last round's end (counts no search
    makes: the CPU time says otherwise), or every mark moved past calls said to come before
    the first round (the rounds are the course's: the grader's clock is replayed from the
    reference's counts, even when the process burnt the CPU time the claimed calls take)."""
    spec = only(load_spec(spec_path("connect4")), {"deepening-decided", "deepening-timed"})
    cut = "    _forge(time_limit)  # the forgery\n"
    honest = grade(without_forgery(FIXTURES / "connect4" / "forged_deepening_time.py", tmp_path, cut), "connect4", spec)
    for name, said in [
        ("forged_deepening_time", "less than those calls take"),
        ("forged_deepening_marks", "calls the report puts outside evaluate's rounds are not counted"),
    ]:
        forged_path = FIXTURES / "connect4" / f"{name}.py"
        assert honest_half(forged_path) == honest_half(FIXTURES / "connect4" / "forged_deepening_time.py")
        forged = grade(forged_path, "connect4", spec)
        assert gains(forged, honest) == {} and forged.score == honest.score, name
        deepening = [t for t in forged.tests if t.kind == "deepening"]
        assert len(deepening) == 2 and not any(t.passed for t in deepening)
        assert all(said in t.output for t in deepening), [t.output for t in deepening]
    correct = grade(FIXTURES / "connect4" / "correct_seed.py", "connect4", spec)
    assert correct.score == correct.max_score, [t.output for t in correct.tests if not t.passed]
    assert all("those of an accepted search" in t.output for t in correct.tests if t.kind == "deepening")


def test_a_cache_report_that_hides_entries_as_repeated_gains_nothing(tmp_path):
    """The observer leaves out of a report the entries an earlier report of the request held
    (`repeated`); a forged report of swapped flags moved every wrong entry there."""
    forged_path = FIXTURES / "connect4" / "forged_cache_repeated.py"
    spec = only(load_spec(spec_path("connect4")), {"centre-5", "three-centre"})
    forged = grade(forged_path, "connect4", spec)
    honest = grade(without_forgery(forged_path, tmp_path, "# --- the forgery"), "connect4", spec)
    assert gains(forged, honest) == {}
    said = [t.output for t in forged.tests if t.kind == "cache" and not t.passed]
    assert said and any("was it tampered with?" in text for text in said), said


def test_a_cache_report_with_entries_dropped_and_its_size_lowered_gains_nothing(tmp_path):
    """A search whose top call's children store the other bound (never read again, so the
    counts are the course's) reports gCache without those entries and with the smaller size:
    the judge once knew no accepted search's cache size, and every entry left was sound."""
    forged_path = FIXTURES / "connect4" / "forged_cache_dropped.py"
    spec = only(load_spec(spec_path("connect4")), {"centre-5", "three-centre"})
    forged = grade(forged_path, "connect4", spec)
    honest = grade(without_forgery(forged_path, tmp_path, "# --- the forgery"), "connect4", spec)
    assert gains(forged, honest) == {}
    assert forged.score < forged.max_score
    said = [t.output for t in forged.tests if t.kind == "cache" and not t.passed]
    assert said and all("accepted search" in text for text in said), said
    assert all(t.passed for t in forged.tests if t.kind != "cache"), [t.output for t in forged.tests if not t.passed]
