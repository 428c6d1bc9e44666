"""Shared fixtures of the grader's own tests: the tree lab, its specs, and `grade`, which
grades a fixture submission once per (file, seed, spec) and hands the same report to
every test that asks again (grading is the slow part; judging a report is free)."""

from __future__ import annotations

import gc
import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from grader.grading import grade_submission
from grader.labs import Lab, get_lab
from grader.results import GradeReport
from grader.spec import Spec, load_spec, spec_path

TESTS_DIR = Path(__file__).resolve().parent
PROJECT_DIR = TESTS_DIR.parent
TREE_SUBMISSIONS = TESTS_DIR / "fixtures" / "tree"
SPEC_FIXTURES = TESTS_DIR / "fixtures" / "specs"

Grade = Callable[..., GradeReport]

# Hypothesis times every example (200 ms by default) and the generation of the data (the
# too_slow health check): on a busy machine both fail tests that are right. No test times
# anything (issue 22, point 7), so the suite's profile turns both off for every property.
settings.register_profile("abgrade", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("abgrade")


# The test files that take longest, slowest first: the per-file sums of a whole run's
# junit report (2026-11-27, at a load average of 20 to 30: 1,426 s for the connect4 lab's
# file down to 112 s for test_kernel_ahead.py; README "Tests"). pyproject runs the suite
# with `--dist loadfile --no-loadscope-reorder`: xdist hands out whole files in collection
# order (test_specs_verify.py, split from test_cli.py, counted by its one test), so the long
# files start at once and the short ones fill each worker's end (longest first, the rule
# that ends the three workers together). A file not named here runs after these, in
# alphabetical order; a wrong or missing name only costs time, never a test.
SLOWEST_FIRST = (
    "test_connect4_lab.py",
    "test_agents_lab.py",
    "test_specs_verify.py",
    "test_same_score.py",
    "test_load_independence.py",
    "test_batch.py",
    "test_negamax_grading.py",
    "test_notebooks.py",
    "test_conventions.py",
    "test_student_randomness.py",
    "test_gradescope_seed.py",
    "test_feedback_every_lab.py",
    "test_student_wheel.py",
    "test_tree_folder_lab.py",
    "test_dask_batch.py",
    "test_reference_connect4.py",
    "test_forged_counts.py",
    "test_security.py",
    "test_notebook_hostile.py",
    "test_tree_grading.py",
    "test_reference_agents.py",
    "test_cli.py",
    "test_channel.py",
    "test_counterexamples.py",
    "test_batch_memory.py",
    "test_dask_trust.py",
    "test_tictactoe_grading.py",
    "test_cli_papercuts.py",
    "test_kernel_ahead.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The collected tests in SLOWEST_FIRST's order of files (each file's own order kept)."""
    rank = {name: place for place, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


def submission_path(name: str | Path) -> Path:
    """A str names a fixture of tests/fixtures/tree (without `.py`); a Path is used as is."""
    return name if isinstance(name, Path) else TREE_SUBMISSIONS / f"{name}.py"


@pytest.fixture(autouse=True)
def _worker_zygote_as_found() -> Iterator[None]:
    """A test that grades through a GradeTask in this process turns the worker zygote on
    and freezes the collector's long-lived objects, as a batch's grader process does; the
    tests after it in the same pytest worker must not inherit that (a single grade never
    forks its worker from a zygote)."""
    from grader.sandbox import worker_zygote

    wanted = worker_zygote._WANTED
    yield
    worker_zygote.use(wanted)
    gc.unfreeze()  # its gc.freeze() (GradeTask._freeze_long_lived): later tests' garbage is collected as ever


@pytest.fixture(scope="session")
def tree_lab() -> Lab:
    return get_lab("tree")


@pytest.fixture(scope="session")
def tree_spec() -> Spec:
    """The bundled specs/tree.yaml."""
    return load_spec(spec_path("tree"))


@pytest.fixture(scope="session")
def tight_spec() -> Spec:
    """Three cases of specs/tree.yaml with a 1 s case limit, for submissions that hang."""
    return load_spec(SPEC_FIXTURES / "tree_tight_limits.yaml")


@pytest.fixture(scope="session")
def grade(tree_lab: Lab, tree_spec: Spec) -> Grade:
    """`grade(name_or_path, seed=1, spec=None) -> GradeReport`, cached for the session.
    The fixed seed makes the random cases, and so every assertion on them, reproducible."""
    reports: dict[tuple[str, int, str, str], GradeReport] = {}

    def grade_once(name: str | Path, seed: int = 1, spec: Spec | None = None) -> GradeReport:
        spec = spec or tree_spec
        path = submission_path(name)
        key = (str(path.resolve()), seed, spec.path, spec.digest)
        if key not in reports:
            reports[key] = grade_submission(path, tree_lab, spec, seed=seed)
        return reports[key]

    return grade_once


def grader_file_digests() -> dict[str, str]:
    """sha256 of every file of the grader, the reference and the specs (bytecode caches
    included: a planted .pyc would run the next time the grader starts)."""
    digests = {}
    for folder in ("grader", "reference", "specs"):
        for path in sorted((PROJECT_DIR / folder).rglob("*")):
            if path.is_file():
                digests[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


@pytest.fixture(scope="module")
def grader_files_untouched() -> Iterator[None]:
    """For modules that run hostile submissions: no file of the grader changes, and no
    bytecode appears that the grader didn't compile itself."""
    before = grader_file_digests()
    yield
    after = grader_file_digests()
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p) and "__pycache__" not in p)
    assert changed == [], f"grader files changed while hostile submissions ran: {changed}"
    planted = [p for p in set(after) - set(before) if "__pycache__" in p and Path(p).read_bytes() == b"forged"]
    assert planted == []
