"""Gradescope's results.json (the autograder specification's schema).

Student-side text arrives sanitised (grader/text.py); every string is passed through
`utf8_safe` again so the file is valid UTF-8 JSON whatever reached the report."""

from __future__ import annotations

import json
from pathlib import Path

from ..counterexample import shown as shown_examples
from ..results import GradeReport, TestResult
from ..text import OUTPUT_CHARS, utf8_safe


def results_json(report: GradeReport, for_students: bool = False) -> dict:
    """Only the fields Gradescope documents (DESIGN.md, Results): `score`, `output`,
    `execution_time`, `tests`, and abgrade's own under `extra_data`, which Gradescope stores
    without showing it: the maximum score, the lab, and the notes meant for the instructor
    (the random cases, the sandbox's isolation level), which mean nothing to a student and
    stay out of `output`; `abgrade gradescope run` prints them to run_autograder's stdout,
    which Gradescope shows to instructors only. `for_students` (Gradescope): what the code
    printed during hidden cases is left out (report.public_output), as the hidden tests'
    details are."""
    output = [f"abgrade, lab {report.lab}: {report.score:g}/{report.max_score:g}"]
    if report.load_notes:
        output.append("While loading the submission:\n" + "\n".join(f"  - {n}" for n in report.load_notes))
    if report.not_run:
        output.append(f"{len(report.not_run)} tests not run: the submission did not load (see the load test).")
    for example in shown_examples(report.tests):  # a hidden case's only if the spec reveals it
        output.append("\n".join(example.lines()))
    printed = report.output_for_students() if for_students else report.student_output
    if printed.strip():
        output.append("Your code printed:\n" + printed[:OUTPUT_CHARS])
    return {
        "score": round(report.score, 4),
        "output": utf8_safe("\n".join(output)),
        "execution_time": round(report.execution_time, 3),
        "tests": [_test(test) for test in report.tests],
        "extra_data": {
            "lab": utf8_safe(report.lab),
            "max_score": round(report.max_score, 4),
            "instructor_notes": [utf8_safe(note) for note in report.notes],
        },
    }


def _test(test: TestResult) -> dict:
    return {
        "name": utf8_safe(test.name),
        "score": round(test.score, 4),
        "max_score": round(test.max_score, 4),
        "status": "passed" if test.passed else "failed",
        "output": utf8_safe(test.output),
        "visibility": test.visibility,
        "tags": [utf8_safe(tag) for tag in test.tags],
    }


def write_results_json(report: GradeReport, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results_json(report), indent=2, allow_nan=False) + "\n", encoding="utf-8")
