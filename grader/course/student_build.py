"""What a student build of abgrade is (the wheel of `abgrade student-wheel`, see
student_wheel.py) and how to tell one: it ships in that wheel, so that `abgrade check
--init-ci --package WHEEL` can refuse a wheel that would put answers in a student
repository's CI."""

from __future__ import annotations

import zipfile
from pathlib import Path

import yaml

MARKER = "grader/student_build.json"
# entries left out, by prefix: answers, and the instructor's side
LEFT_OUT = (
    "reference/solutions/",
    "reference/connect4_solver.py",  # a full Connect Four solver, used only to verify specs
    "reference/data/connect4/Test_L3_R1",  # its test set
    "grader/demo/",
    "grader/batch/",
    "grader/commands/batch.py",
    "grader/commands/cluster.py",
    "grader/commands/demo.py",
    "grader/commands/grade.py",
    "grader/commands/gradebook.py",
    "grader/commands/gradebook_publish.py",
    "grader/commands/gradescope.py",
    "grader/commands/specs.py",
    "grader/commands/student_wheel.py",
    "grader/course/autograder.py",
    "grader/course/gradescope_bundle.py",
    "grader/course/student_wheel.py",
    "grader/course/templates/run_autograder",
    "grader/course/templates/setup.sh",
)


def left_out(name: str) -> bool:
    return name.startswith(LEFT_OUT) or "/__pycache__/" in name


def forbidden_entries(wheel: Path) -> list[str]:
    """What a student wheel must not hold and this one does: left-out files, a spec with a
    random section or a case that is not visible."""
    found = []
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if left_out(name):
                found.append(name)
            elif name.startswith("grader/specs/") and name.endswith(".yaml"):
                raw = yaml.safe_load(archive.read(name))
                if "random" in raw or "random" in (raw.get("checks") or {}):
                    found.append(f"random-case settings in {name}")
                for case in raw.get("cases") or []:
                    if case.get("visibility", "visible") != "visible":
                        found.append(f"the {case.get('visibility')} case {case.get('name')!r} in {name}")
    return found


def student_wheel_problem(wheel: Path) -> str | None:
    """Why `wheel` is not a student build, or None."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            marked = MARKER in archive.namelist()
    except (OSError, zipfile.BadZipFile) as exc:
        return f"not a wheel ({exc})"
    if not marked:
        return "the full abgrade (it carries the reference solutions and every hidden case), not the student wheel"
    found = forbidden_entries(wheel)
    if found:
        return f"a student wheel that carries {', '.join(found[:3])}"
    return None
