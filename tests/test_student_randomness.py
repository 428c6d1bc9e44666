"""A submission's own random draws don't move its grade: every student process (a fresh
`.py` worker, a fork of the worker zygote, a fresh kernel, a fork of the kernel zygote, a
lab folder's) seeds `random` and numpy's global generator, before any student code runs,
with a value derived one-way from the assignment's seed (seeding.student_seed). A search
that picks at random among tied moves, some of them wrong, gets the same tests, score and
output on every run, in every copy of a batch, as `.py` and as a notebook; another seed may
draw otherwise; and the state a student can read gives the seed away nowhere. Real
graders, real student processes, real kernels; nothing timed."""

from __future__ import annotations

import json
import random
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
import yaml

from grader.grading import grade_submission
from grader.lab_setup import load_lab
from grader.labs import get_lab
from grader.results import GradeReport
from grader.sandbox import worker_zygote
from grader.sandbox.identity import grader_is_root
from grader.seeding import STUDENT_SEED_LIMIT, Seed, spec_seed, student_seed
from grader.spec import load_spec, spec_path

from .notebook_builder import notebook_from_py

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
FIXTURES = TESTS / "fixtures" / "randomness"
TIES = {"random": FIXTURES / "bug_random_tie.py", "numpy": FIXTURES / "bug_random_tie_numpy.py"}
TREE_SPEC = TESTS / "fixtures" / "specs" / "tree_hostile_limits.yaml"  # two fixed cases: cheap
TREE_FOLDER = PROJECT / "examples" / "labs" / "tree"
# Two runs: each run's draw at import is checked against the one the seed derives (one
# in 10**6 by chance), so a second run shows the repeat and a third repeated its evidence.
RUNS = 2
SECRET = 987654321  # nine digits: found by chance in a state's 6,900 digits once in 10**5 tries

pytestmark = pytest.mark.usefixtures("grader_files_untouched")


def abgrade(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600
    )


def light_tictactoe_spec(folder: Path) -> Path:
    """specs/tictactoe.yaml with three fixed cases (x-answers-corner: only the centre keeps
    the draw, and the fixtures' ties hold losing moves) and three random ones (shrunk when
    they fail: the shrinker's re-runs draw too)."""
    raw = yaml.safe_load(spec_path("tictactoe").read_text())
    raw["cases"] = [c for c in raw["cases"] if c["name"] in ("rows", "course-second-move", "x-answers-corner")]
    raw["random"]["count"] = 3
    path = folder / "tictactoe_light.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def import_draw(output: str) -> int:
    """What a tie fixture drew at import (`a draw at import: N`), from the report's output."""
    found = re.findall(r"a draw at import: (\d+)", output)
    assert len(found) == 1, output
    return int(found[0])


def expected_import_draw(kind: str, value: int) -> int:
    """The tie fixture's first draw, made here from the derived value the grader seeds with."""
    if kind == "random":
        return random.Random(value).randint(0, 10**6)
    return int(np.random.RandomState(value).randint(0, 10**6))


def graded(tmp_path: Path, submission: Path, spec: Path, *options: object, lab: str = "tictactoe") -> dict:
    out = tmp_path / f"results-{len(list(tmp_path.glob('results-*')))}.json"
    done = abgrade("grade", submission, "--lab", lab, "--spec", spec, "-q", "--json", out, *options, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(out.read_text())


def as_submitted(tmp_path: Path, fixture: Path, suffix: str) -> Path:
    if suffix == ".ipynb":
        return notebook_from_py(fixture, tmp_path / f"{fixture.stem}.ipynb")
    return Path(shutil.copyfile(fixture, tmp_path / fixture.name))


# --- the derived value ------------------------------------------------------------------


def test_the_value_is_derived_one_way_from_the_seed_and_always_the_same() -> None:
    for secret in (False, True):
        values = [student_seed(Seed(seed, "test", secret)) for seed in (0, 1, 2, SECRET)]
        assert values == [student_seed(Seed(seed, "again", secret)) for seed in (0, 1, 2, SECRET)]
        assert len(set(values)) == 4  # another seed, another value
        assert all(0 <= v < STUDENT_SEED_LIMIT for v in values)  # numpy.random.seed takes it
        assert all(v != seed for v, seed in zip(values, (0, 1, 2, SECRET)))
    # a secret seed goes through scrypt: not the public hash of the same number
    assert student_seed(Seed(SECRET, "bundle", secret=True)) != student_seed(Seed(SECRET, "--seed"))


# --- the same grade, run after run ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".py", ".ipynb"])
@pytest.mark.parametrize("kind", ["random", "numpy"])
def test_random_tie_picks_get_the_same_tests_score_and_output_on_every_run(tmp_path, kind, suffix):
    """Two `abgrade grade` runs without --seed: the spec's own seed, so the same derived
    value, so the same picks among the tied moves (right and wrong ones) every time."""
    spec = light_tictactoe_spec(tmp_path)
    submission = as_submitted(tmp_path, TIES[kind], suffix)
    runs = [graded(tmp_path, submission, spec) for _ in range(RUNS)]
    first = runs[0]
    for run in runs[1:]:
        assert run["score"] == first["score"]
        assert json.dumps(run["tests"], sort_keys=True) == json.dumps(first["tests"], sort_keys=True)
        assert import_draw(run["output"]) == import_draw(first["output"])
    value = student_seed(spec_seed(load_spec(spec)))
    assert import_draw(first["output"]) == expected_import_draw(kind, value)


@pytest.mark.slow
def test_the_tie_picks_do_reach_the_grade(tmp_path):
    """Why the test above means something: under other seeds the same file picks other
    moves among its ties and gets other scores (each seed's own, every time)."""
    spec = light_tictactoe_spec(tmp_path)
    scores = {seed: graded(tmp_path, TIES["random"], spec, "--seed", seed)["score"] for seed in (1, 2, 3, 4)}
    assert len(set(scores.values())) > 1, scores
    assert graded(tmp_path, TIES["random"], spec, "--seed", 1)["score"] == scores[1]


def test_another_seed_may_draw_otherwise_but_a_seed_always_draws_the_same(tmp_path):
    submission = FIXTURES / "tree_draws.py"
    draws = {}
    for seed in (11, 12, 11):
        output = graded(tmp_path, submission, TREE_SPEC, "--seed", seed, lab="tree")["output"]
        drawn = draws_of(output)
        assert draws.setdefault(seed, drawn) == drawn
        assert drawn == expected_draws(student_seed(Seed(seed, "given with --seed")))
    assert draws[11] != draws[12]


# --- every way a student process is made ------------------------------------------------


def draws_of(output: str) -> tuple[str, str]:
    """tree_draws.py's `DRAWS <random.random()> <np.random.randint(0, 2**31)>`."""
    found = re.findall(r"^DRAWS (\S+) (\d+)$", output, re.MULTILINE)
    assert len(found) == 1, output
    return found[0]


def expected_draws(value: int) -> tuple[str, str]:
    return repr(random.Random(value).random()), str(np.random.RandomState(value).randint(0, 2**31))


def grade_tree(path: Path, seed: Seed, folder_lab: bool = False) -> GradeReport:
    if folder_lab:
        lab, spec = load_lab(str(TREE_FOLDER))
    else:
        lab, spec = get_lab("tree"), load_spec(TREE_SPEC)
    return grade_submission(path, lab, spec, seed=seed)


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """This test process grades as a batch's grader process does (`.py` workers are forks
    of the worker zygote); the pids of the forks made."""
    monkeypatch.delenv("ABGRADE_WORKER_ZYGOTE", raising=False)
    worker_zygote.use()
    forks: list[int] = []
    fork = worker_zygote.KernelZygote.fork

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        forks.append(fork(self, *args, **kwargs))
        return forks[-1]

    monkeypatch.setattr(worker_zygote.KernelZygote, "fork", counted)
    yield forks
    worker_zygote.use(False)


SEED = Seed(424242, "test")


def test_a_fresh_py_worker_seeds_random_and_numpy_on_its_first_import(tmp_path):
    """A fresh worker has no numpy loaded (the tree observer imports none): the import
    hook seeds numpy.random right after the submission imports it."""
    report = grade_tree(as_submitted(tmp_path, FIXTURES / "tree_draws.py", ".py"), SEED)
    assert report.score == report.max_score
    assert draws_of(report.student_output) == expected_draws(student_seed(SEED))


def test_a_lab_folder_seeds_them_the_same_way(tmp_path):
    report = grade_tree(as_submitted(tmp_path, FIXTURES / "tree_draws.py", ".py"), SEED, folder_lab=True)
    assert draws_of(report.student_output) == expected_draws(student_seed(SEED))


@pytest.mark.parametrize("zygote", ["1", "0"], ids=["kernel-zygote-fork", "fresh-kernel"])
def test_a_notebook_kernel_is_seeded_before_its_first_cell(tmp_path, monkeypatch, zygote):
    monkeypatch.setenv("ABGRADE_KERNEL_ZYGOTE", zygote)
    report = grade_tree(as_submitted(tmp_path, FIXTURES / "tree_draws.py", ".ipynb"), SEED)
    assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]
    assert draws_of(report.student_output) == expected_draws(student_seed(SEED))


@pytest.mark.skipif(not grader_is_root(), reason="the worker zygote serves root graders (a leased uid per worker)")
def test_a_zygote_fork_draws_the_same_whatever_ran_before_it_in_that_zygote(tmp_path, forking):
    """The zygote's numpy is loaded already (seeded at once); a fork's state is set from
    its own grading's value, so a submission that drew and reseeded from the clock in the
    fork before changes nothing, and a fork draws as a fresh worker does."""
    draws = as_submitted(tmp_path, FIXTURES / "tree_draws.py", ".py")
    noisy = as_submitted(tmp_path, FIXTURES / "draws_a_lot.py", ".py")
    first = grade_tree(draws, SEED)
    assert "SPENT" in grade_tree(noisy, SEED).student_output
    again = grade_tree(draws, SEED)
    assert len(forking) >= 3, worker_zygote.note()
    expected = expected_draws(student_seed(SEED))
    assert draws_of(first.student_output) == draws_of(again.student_output) == expected
    other = Seed(SEED.value + 1, "test")
    assert draws_of(grade_tree(draws, other).student_output) == expected_draws(student_seed(other))


CLASS_LOADED = """
import importlib.machinery, importlib.util, sys
exec(open(sys.argv[1]).read())
ORIGIN = importlib.util.find_spec("random").origin
class ClassLoader:  # a loader that is a class, as the frozen and built-in modules' loaders are
    @staticmethod
    def create_module(spec):
        return None
    @staticmethod
    def exec_module(module):
        exec(compile(open(ORIGIN).read(), ORIGIN, "exec"), module.__dict__)
class ClassFinder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        return importlib.machinery.ModuleSpec(name, ClassLoader) if name == "random" else None
sys.meta_path.insert(0, ClassFinder)
before = len(sys.meta_path)
_abgrade_seed_random(int(sys.argv[2]))
assert "random" not in sys.modules and "numpy" not in sys.modules
import random
print(random.random(), ClassLoader.exec_module.__qualname__, len(sys.meta_path) - before)
"""


def test_the_import_hook_seeds_a_module_whose_loader_is_a_class_and_leaves_that_class_alone():
    """A fresh interpreter (`-I -S`: nothing but the standard library) whose `random` comes
    from a loader that is a class: the hook wraps it rather than patch what every module of
    that loader shares, and is still waiting for numpy.random (one finder left)."""
    source = PROJECT / "grader" / "sandbox" / "student_random.py"
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", CLASS_LOADED, str(source), "4242"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [repr(random.Random(4242).random()), "ClassLoader.exec_module", "1"]


# --- a batch: every copy the same -------------------------------------------------------


def batch_rows(out: Path, query: str) -> list[tuple]:
    with closing(sqlite3.connect(out / "gradebook.sqlite", timeout=30)) as db:
        return db.execute(query).fetchall()


@pytest.mark.slow
def test_every_copy_in_a_batch_gets_the_same_grade(tmp_path):
    """Three copies of each tie fixture as `.py` and two as notebooks, graded by one grader
    process (-j 1: as root, each `.py` a fork of one worker zygote, each notebook's kernel
    but the last started ahead while the one before is graded): every copy of a file gets
    that file's score and tests, and the score a fresh grading gives it with the class's seed."""
    spec = light_tictactoe_spec(tmp_path)
    folder = tmp_path / "class"
    folder.mkdir()
    copies: dict[str, str] = {}
    for kind, fixture in TIES.items():
        for student in ("a", "b", "c"):
            name = f"{kind}_{student}"
            shutil.copyfile(fixture, folder / f"{name}.py")
            copies[name] = kind
        for student in ("d", "e"):
            name = f"{kind}_{student}"
            notebook_from_py(fixture, folder / f"{name}.ipynb")
            copies[name] = f"{kind}.ipynb"
    out = tmp_path / "out"
    options = ("--lab", "tictactoe", "--spec", spec, "--out", out, "--jobs", 1, "--seed", SECRET)
    done = subprocess.run(
        [sys.executable, "-m", "grader", "batch", str(folder), *map(str, options)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    scores = dict(batch_rows(out, "SELECT student, score FROM submissions WHERE status = 'graded'"))
    tests: dict[str, list] = {}
    for student, name, score, passed in batch_rows(
        out, "SELECT student, name, score, passed FROM tests ORDER BY student, position"
    ):
        tests.setdefault(student, []).append((name, score, passed))
    assert sorted(scores) == sorted(copies), done.stdout
    for kind, fixture in TIES.items():
        for suffix in (".py", ".ipynb"):
            label = kind if suffix == ".py" else f"{kind}.ipynb"
            mine = [name for name, of in copies.items() if of == label]
            assert len({scores[name] for name in mine}) == 1, scores
            assert all(tests[name] == tests[mine[0]] for name in mine)
            alone = as_submitted(tmp_path, fixture, suffix)
            fresh = grade_submission(alone, get_lab("tictactoe"), load_spec(spec), seed=Seed(SECRET, "class", True))
            assert fresh.score == scores[mine[0]], (kind, suffix)


# --- the hostile angle: the state gives the seed away nowhere ---------------------------


@pytest.mark.parametrize("secret", [False, True], ids=["public-seed", "secret-seed"])
def test_the_state_a_student_reads_holds_the_derived_value_never_the_seed(tmp_path, secret):
    seed = Seed(SECRET, "test", secret)
    report = grade_tree(as_submitted(tmp_path, FIXTURES / "reads_random_state.py", ".py"), seed)
    output = report.student_output
    (state,) = re.findall(r"^RANDOM-STATE ([\d ]+)$", output, re.MULTILINE)
    (numpy_state,) = re.findall(r"^NUMPY-STATE ([\d ]+)$", output, re.MULTILINE)
    value = student_seed(seed)
    assert value != SECRET
    # what the student read is the derived value's state, complete
    assert [int(word) for word in state.split()] == list(random.Random(value).getstate()[1])
    assert [int(word) for word in numpy_state.split()] == np.random.RandomState(value).get_state()[1].tolist()
    for text in (state, numpy_state, state.replace(" ", ""), numpy_state.replace(" ", "")):
        assert str(SECRET) not in text
