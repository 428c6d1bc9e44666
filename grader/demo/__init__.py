"""`abgrade demo`: grade the bundled example submissions, one correct and one with a
classic bug, and print what a student would see."""

from __future__ import annotations

from pathlib import Path

from ..grading import grade_submission
from ..labs import get_lab
from ..report.terminal import summary
from ..spec import load_spec, spec_path

DEMO_DIR = Path(__file__).resolve().parent
EXAMPLES = (("tree", "tree_correct.py"), ("tree", "tree_strict_cutoff.py"))


def run_demo() -> int:
    """Returns 0 when the correct example gets full marks and the buggy one does not."""
    scores = []
    for lab_name, file in EXAMPLES:
        lab = get_lab(lab_name)
        spec = load_spec(spec_path(lab_name))
        report = grade_submission(DEMO_DIR / file, lab, spec)
        print(summary(report, show_hidden=True))
        print("=" * 72)
        scores.append(report.score == report.max_score)
    ok = scores == [True, False]
    print(
        "demo: the correct submission gets full marks and the buggy one loses points"
        if ok
        else "demo: UNEXPECTED scores, see above"
    )
    return 0 if ok else 1
