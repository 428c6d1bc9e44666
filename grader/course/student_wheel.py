"""`abgrade student-wheel -o DIR`: the package students and student repositories install
(their CI's ABGRADE_PACKAGE). It runs `abgrade check` (the visible cases, judged from the
specs' stored expectations) and `abgrade exercise` (the skeletons), and carries no answer:

- no `reference/solutions/` (a complete solution of every lab in the student API) and no
  `grader/demo/` (a correct tree-lab submission); the skeletons ship pre-generated instead,
  as `grader/skeletons/<lab>/lab.py` and `lab.ipynb` (exercises.py reads them);
- specs without hidden cases (a case whose checks are not all `visible` is left out whole:
  name, inputs and expectations) and without random-case settings (`random:` and its check);
- only the `check` and `exercise` commands: the instructor's (batch, gradebook, grade with
  hidden cases, gradescope, specs, cluster, demo) and their packages are left out.

What stays and must (README, "What students install"): the reference searches and the
classic-bug replays under `reference/` (the judges compute true values for the bound checks,
accepted variants' counts and diagnoses with them at grading time). What a student wheel
may hold is student_build.py's, which ships in it (`check --init-ci` checks a wheel with it).

The wheel is the full one (gradescope_bundle.build_wheel) rewritten: entries dropped or
replaced, the version marked `+student`, RECORD computed again."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..labs import Lab, get_lab, lab_names
from ..spec import Spec, load_spec, spec_path
from .gradescope_bundle import build_wheel
from .student_build import LEFT_OUT, MARKER, forbidden_entries, left_out

SKELETONS = "grader/skeletons"
LOCAL_VERSION = "student"
KEPT_SEARCHES = {
    "reference/tree_search.py": "the tree lab's reference search: true values for the bound checks",
    "reference/tree_bugs.py": "the tree lab's classic-bug replays behind its diagnoses",
    "reference/tictactoe_search.py": "the tic-tac-toe searches: optimal moves, bound checks, accepted counts",
    "reference/tictactoe_bugs.py": "the tic-tac-toe classic-bug replays behind its diagnoses",
    "reference/negamax.py": "the negamax lab's true values and optimal successors for its bound and choice checks",
    "reference/connect4_search.py": "the connect4 depth-limited values, cache proofs, accepted variants and bugs",
    "reference/agents.py": "the agents' payoffs and optimal actions, their accepted counts and classic bugs",
    "reference/agent_tournaments.py": "the opponents of the agents lab's matches",
}


class StudentBuildError(Exception):
    """The student wheel could not be built, or would carry something it must not."""


@dataclass(frozen=True)
class StudentSpec:
    """A spec as shipped to students: its text, and what was left out of it."""

    lab: str
    text: str
    dropped_cases: tuple[str, ...]
    dropped_random: bool


def visible_case_names(lab: Lab, spec: Spec) -> set[str]:
    """The cases every check of which is `visible` (the rule of grading._visibility: a
    case's own visibility, else its check kind's)."""
    shown: dict[str, bool] = {}
    for plan in lab.plans(spec, 0):
        for kind in plan.kinds:
            policy = spec.policy(kind)
            visible = (plan.visibility or (policy.visibility if policy else "visible")) == "visible"
            shown[plan.case] = shown.get(plan.case, True) and visible
    return {case for case, visible in shown.items() if visible}


def student_spec(lab_name: str, path: Path) -> StudentSpec:
    """The spec at `path` without hidden cases and random-case settings."""
    lab, spec = get_lab(lab_name), load_spec(path)
    keep = visible_case_names(lab, spec)
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    cases = raw.get("cases") or []
    dropped = tuple(str(case.get("name")) for case in cases if case.get("name") not in keep)
    raw["cases"] = [case for case in cases if case.get("name") in keep]
    dropped_random = "random" in raw or "random" in (raw.get("checks") or {})
    raw.pop("random", None)
    (raw.get("checks") or {}).pop("random", None)
    header = (
        f"# The {lab_name} lab's spec as students get it (abgrade student-wheel): visible cases only, with\n"
        "# their stored expectations; hidden cases and random-case settings are left out.\n"
    )
    return StudentSpec(
        lab_name, header + yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), dropped, dropped_random
    )


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _student_version(metadata: str) -> tuple[str, str]:
    """(the full wheel's version, METADATA with the student version)."""
    lines = metadata.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if line.startswith("Version: "):
            version = line.split(": ", 1)[1].strip()
            lines[number] = f"Version: {version}+{LOCAL_VERSION}\n"
            return version, "".join(lines)
    raise StudentBuildError("the full wheel's METADATA has no Version line")


def rewrite_wheel(full: Path, out_dir: Path, specs: dict[str, StudentSpec], skeletons: dict[str, str]) -> Path:
    """The student wheel made from the full one at `full` (see the module's docstring)."""
    with zipfile.ZipFile(full) as source:
        names = source.namelist()
        info_dir = next(n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info"))
        version, metadata = _student_version(source.read(f"{info_dir}/METADATA").decode())
        student_info = info_dir.replace(f"-{version}.dist-info", f"-{version}+{LOCAL_VERSION}.dist-info")
        files: dict[str, bytes] = {}
        for name in names:
            if left_out(name) or name == f"{info_dir}/RECORD" or name.startswith("grader/specs/"):
                continue
            files[name.replace(f"{info_dir}/", f"{student_info}/", 1)] = source.read(name)
    files[f"{student_info}/METADATA"] = metadata.encode()
    for lab, spec in specs.items():
        files[f"grader/specs/{lab}.yaml"] = spec.text.encode()
    for name, text in skeletons.items():
        files[f"{SKELETONS}/{name}"] = text.encode()
    files[MARKER] = (json.dumps(_marker(specs), indent=2) + "\n").encode()
    files[f"{student_info}/RECORD"] = _record(files, f"{student_info}/RECORD")
    wheel_name = Path(full).name.replace(f"-{version}-", f"-{version}+{LOCAL_VERSION}-", 1)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / wheel_name
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name in sorted(files, key=lambda n: (n.startswith(student_info), n)):  # dist-info last, RECORD last of all
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16
            wheel.writestr(info, files[name])
    problems = forbidden_entries(target)
    if problems:
        target.unlink()
        raise StudentBuildError(f"the student wheel would carry {', '.join(problems)}; nothing was written")
    return target


def _record(files: dict[str, bytes], record_name: str) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for name in sorted(n for n in files if n != record_name):
        writer.writerow([name, _record_hash(files[name]), len(files[name])])
    writer.writerow([record_name, "", ""])
    return out.getvalue().encode()


def _marker(specs: dict[str, StudentSpec]) -> dict:
    return {
        "build": "student",
        "commands": ["check", "exercise"],
        "left_out": list(LEFT_OUT),
        "dropped_cases": {lab: list(spec.dropped_cases) for lab, spec in specs.items() if spec.dropped_cases},
        "random_settings_dropped": sorted(lab for lab, spec in specs.items() if spec.dropped_random),
        "kept_searches": KEPT_SEARCHES,
    }


def build_student_wheel(out_dir: Path, source: Path | None) -> Path:
    """Build the full wheel from the checkout at `source`, then the student wheel from it."""
    from ..exercises import exercise_notebook_text, exercise_text

    specs = {lab: student_spec(lab, spec_path(lab)) for lab in lab_names() if spec_path(lab).is_file()}
    skeletons = {}
    for lab in specs:
        skeletons[f"{lab}/lab.py"] = exercise_text(lab)
        skeletons[f"{lab}/lab.ipynb"] = exercise_notebook_text(lab)
    with tempfile.TemporaryDirectory(prefix="abgrade-student-wheel-") as temp:
        full = build_wheel(source, Path(temp))
        return rewrite_wheel(full, out_dir, specs, skeletons)
