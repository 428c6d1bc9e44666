"""Gradescope's results.json (the autograder specification's schema)."""
from __future__ import annotations

import json
from pathlib import Path

from ..results import GradeReport


def results_json(report: GradeReport) -> dict:
    output = [f"abgrade, lab {report.lab}: {report.score:g}/{report.max_score:g}"]
    output += report.notes
    if report.student_output.strip():
        output.append("Your code printed:\n" + report.student_output[:20000])
    return {
        "score": round(report.score, 4),
        "max_score": round(report.max_score, 4),
        "output": "\n".join(output),
        "execution_time": round(report.execution_time, 3),
        "tests": [
            {
                "name": test.name,
                "score": round(test.score, 4),
                "max_score": round(test.max_score, 4),
                "status": "passed" if test.passed else "failed",
                "output": test.output,
                "visibility": test.visibility,
                "tags": test.tags,
            }
            for test in report.tests
        ],
    }


def write_results_json(report: GradeReport, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results_json(report), indent=2, allow_nan=False) + "\n")
