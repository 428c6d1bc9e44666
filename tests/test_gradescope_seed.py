"""A Gradescope bundle's hidden cases (issue 22, point 1): `gradescope build` draws a seed
once and keeps it in the bundle's settings; every run of that bundle draws the same random
cases from it, so every run of one submission gives the same tests and score (the tree
lab's correct and buggy files, as often as test_same_score.LABS says; a buggy file of
every other lab once); results.json never shows the seed, nor what the student's
code printed during hidden cases; and a hostile submission that hunts the file system,
the environment and /proc for it finds nothing, at every isolation level."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from grader.course.autograder import run_autograder
from grader.course.gradescope_bundle import SETTINGS_FILE
from grader.sandbox import isolation as isolation_module
from grader.sandbox.identity import grader_is_root
from grader.seeding import spec_seed
from grader.spec import load_spec, spec_path

from .test_same_score import FIXTURES, LABS, comparable, spec_options

HOSTILE = FIXTURES / "hostile"
HAVE_NAMESPACES = isolation_module.detect_isolation().level == "namespaces"
LEVELS = ["namespaces", "process"] if HAVE_NAMESPACES else ["process"]

OUTSIDE_TMP = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
# The seed the same-score bundles are built with (`build --seed`): a drawn one would make
# this file's random cases, and its time, differ from run to run (a buggy file's failed
# random cases are shrunk, at a cost that depends on the case: in one busy run the connect4
# bundle's test took 4 minutes, where test_same_score's, with the spec's own seed, took
# under one). That `build` draws a seed is the first test's to show; this one is long
# enough that a leak into results.json can't be a coincidence.
BUNDLE_SEED = 271828182

pytestmark = pytest.mark.usefixtures("grader_files_untouched")


def abgrade(*args: object, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def fake_wheel(tmp_path: Path) -> Path:
    """`build --wheel` takes any file named like a wheel: these tests run the bundle's
    grader from this checkout (test_gradescope_bundle.py installs a real one)."""
    wheel = tmp_path / "abgrade-0-py3-none-any.whl"
    wheel.write_bytes(b"")
    return wheel


def build(tmp_path: Path, lab: str, wheel: Path, *extra: object) -> Path:
    """Build a bundle with the CLI and unpack it into a fresh fake /autograder, open to all
    as Gradescope's is (the sandbox alone must hide its bundle), and outside /tmp, which the
    namespaces level replaces with a private one (as it could not /autograder)."""
    bundle = tmp_path / f"{lab}-{len(list(tmp_path.glob('*.zip')))}.zip"
    built = abgrade("gradescope", "build", "--lab", lab, "-o", bundle, "--wheel", wheel, *extra)
    assert built.returncode == 0, built.stderr
    root = Path(tempfile.mkdtemp(prefix="abgrade-test-autograder-", dir=OUTSIDE_TMP))
    root.chmod(0o755)
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
    (root / "submission").mkdir()
    return root


@pytest.fixture
def roots() -> Iterator[list[Path]]:
    made: list[Path] = []
    yield made
    for root in made:
        shutil.rmtree(root, ignore_errors=True)


def settings_seed(root: Path) -> int:
    return json.loads((root / "source" / SETTINGS_FILE).read_text())["seed"]


def run_bundle(root: Path, submission: Path, **env: str) -> dict:
    """One Gradescope run of `submission`, as run_autograder does it: a fresh process."""
    shutil.rmtree(root / "submission")
    (root / "submission").mkdir()
    shutil.copyfile(submission, root / "submission" / submission.name)
    done = abgrade("gradescope", "run", "--root", root, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((root / "results" / "results.json").read_text())


def test_build_draws_a_seed_once_and_seed_fixes_it(tmp_path, fake_wheel, roots):
    roots += [build(tmp_path, "tree", fake_wheel) for _ in range(2)]
    first, second = (settings_seed(root) for root in roots)
    assert isinstance(first, int) and first != second  # drawn at build time, one per bundle
    roots.append(build(tmp_path, "tree", fake_wheel, "--seed", 31337))
    assert settings_seed(roots[-1]) == 31337
    bad = abgrade("gradescope", "build", "--lab", "tree", "-o", tmp_path / "x.zip", "--wheel", fake_wheel, "--seed", -1)
    assert bad.returncode == 2 and bad.stderr.startswith("abgrade: --seed: must be a whole number from 0")


def random_cases_only(lab: str, folder: Path) -> tuple[object, ...]:
    """`--spec FILE`: the lab's spec as test_same_score grades it with its fixed cases left
    out (its checks and hidden random cases all kept): the random cases are where the
    seed is used, and each of these buggy files fails some of them (test_same_score.LABS)."""
    options = spec_options(lab, folder)
    raw = yaml.safe_load(Path(str(options[1])).read_text() if options else spec_path(lab).read_text())
    raw["cases"] = []
    path = folder / f"{lab}_random_only.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return ("--spec", path)


@pytest.mark.slow
@pytest.mark.parametrize("lab", list(LABS))
def test_every_run_of_one_bundle_gives_the_same_tests_and_score(tmp_path, fake_wheel, roots, lab):
    """The tree lab's correct and buggy files run as often as test_same_score.LABS says;
    every other lab's buggy file runs once, for what is lab-specific here (no hidden
    case's text shows the seed), on its hidden random cases alone (random_cases_only: the
    fixed cases draw nothing from the seed, and the tree lab's runs go through them): that
    each lab draws the same cases and output from one seed on every run is
    test_same_score's to show, byte for byte, with the spec's seed, and a bundle's seed
    reaches the labs as the same number would."""
    correct, buggy, runs = LABS[lab]
    spec = spec_options(lab, tmp_path) if lab == "tree" else random_cases_only(lab, tmp_path)
    roots.append(root := build(tmp_path, lab, fake_wheel, "--seed", BUNDLE_SEED, *spec))
    seed = str(settings_seed(root))
    assert seed == str(BUNDLE_SEED)
    graded = ((correct, True), (buggy, False)) if lab == "tree" else ((buggy, False),)
    for name, full_marks in graded:
        results = [run_bundle(root, FIXTURES / name) for _ in range(runs if lab == "tree" else 1)]
        seen = [comparable(r, printed="") for r in results]  # every field but the time
        assert all(one == seen[0] for one in seen), f"{name}: {[one[0] for one in seen]}"
        assert (results[0]["score"] == results[0]["extra_data"]["max_score"]) == full_marks, name
        for written in results:
            assert seed not in json.dumps(written), "results.json shows the bundle's secret seed"
            # the note is the instructor's (issue 25): in extra_data and run_autograder's stdout, not in output
            assert any("own seed (not shown)" in note for note in written["extra_data"]["instructor_notes"])
            assert "seed" not in written["output"]


def test_the_bundle_seed_decides_the_random_cases(tmp_path, fake_wheel, roots):
    """Two bundles (two seeds) grade one buggy file on other random cases; `run --seed`
    overrides the bundle's and still doesn't show it."""
    buggy = FIXTURES / "tree" / "bug_strict_cutoff.py"
    roots += [build(tmp_path, "tree", fake_wheel, "--seed", seed) for seed in (5, 99)]
    five, ninety_nine = (run_bundle(root, buggy) for root in roots)

    def random_outputs(results: dict) -> list[str]:
        return [t["output"] for t in results["tests"] if t["tags"][0] == "random"]

    assert random_outputs(five) != random_outputs(ninety_nine)
    done = abgrade("gradescope", "run", "--root", roots[0], "--seed", 99)
    assert done.returncode == 0, done.stderr
    overridden = json.loads((roots[0] / "results" / "results.json").read_text())
    assert random_outputs(overridden) == random_outputs(ninety_nine)
    assert "--seed" not in overridden["output"]


def test_a_bundle_without_a_seed_uses_the_spec_seed_and_says_so_in_the_log(tmp_path, fake_wheel, roots):
    roots.append(root := build(tmp_path, "tree", fake_wheel))
    settings = json.loads((root / "source" / SETTINGS_FILE).read_text())
    del settings["seed"]  # a bundle built by an abgrade before this one
    (root / "source" / SETTINGS_FILE).write_text(json.dumps(settings))
    (root / "submission" / "tree.py").write_text((FIXTURES / "tree" / "bug_strict_cutoff.py").read_text())
    done = abgrade("gradescope", "run", "--root", root)
    assert done.returncode == 0 and "holds no seed" in done.stderr and "rebuild the bundle" in done.stderr
    old = json.loads((root / "results" / "results.json").read_text())
    done = abgrade("grade", root / "submission" / "tree.py", "--lab", "tree", "--json", tmp_path / "local.json")
    local = json.loads((tmp_path / "local.json").read_text())
    assert comparable(old) == comparable(local)  # the spec's own seed, as `grade` uses
    assert str(spec_seed(load_spec(spec_path("tree"))).value) not in old["output"]
    settings["seed"] = "soon"
    (root / "source" / SETTINGS_FILE).write_text(json.dumps(settings))
    broken = abgrade("gradescope", "run", "--root", root)
    assert broken.returncode != 0 and "seed: must be a whole number" in broken.stderr
    assert "tell your instructor" in json.loads((root / "results" / "results.json").read_text())["output"]


# A course spec with a visible case and a hidden one, and visible-or-not random cases; the
# submission prints every node it is called on.
SPEC_WITH_HIDDEN = """\
lab: tree
checks:
  load: {points: 1}
  value: {points: 2}
  nodes: {points: 1}
  pruned: {points: 2}
  bounds: {points: 1}
  random: {points: 1, visibility: after_published}
  limits: {points: 1}
random: {count: 2, branching: [1, 3], depth: [2, 3], values: int, value_range: [-9, 9], tie_rate: 0.3}
cases:
  - name: shown
    graph: {shown_root: [shown_a, shown_b]}
    terminal_nodes: {shown_a: 3, shown_b: 5}
    expect: {value: 5, nodes: 3, pruned: []}
  - name: secret
    visibility: hidden
    graph: {secret_root: [secret_a]}
    terminal_nodes: {secret_a: 7}
    expect: {value: 7, nodes: 2, pruned: []}
"""


def test_what_code_prints_during_hidden_cases_stays_out_of_results_json(tmp_path, fake_wheel, roots):
    spec = tmp_path / "course.yaml"
    spec.write_text(SPEC_WITH_HIDDEN)
    printing = tmp_path / "tree.py"
    printing.write_text(
        "print('loading')\n"
        + (FIXTURES / "tree" / "correct_fail_hard.py")
        .read_text()
        .replace("    if node in terminal_nodes:", "    print('visit', node)\n    if node in terminal_nodes:", 1)
    )
    roots.append(root := build(tmp_path, "tree", fake_wheel, "--spec", spec))
    results = run_bundle(root, printing)
    assert results["score"] == results["extra_data"]["max_score"]
    assert "Your code printed:\nloading\n" in results["output"] and "visit shown_root" in results["output"]
    assert "secret" not in results["output"].replace("(not shown)", "")
    assert "[what your code printed from the first hidden case on is not shown]" in results["output"]
    visits = re.findall(r"visit (\S+)", results["output"])
    assert visits and all(node.startswith("shown_") for node in visits), visits  # no random tree's nodes either
    # on the student's own machine (`grade`), all of it
    local = abgrade("grade", printing, "--lab", "tree", "--spec", spec, "--json", tmp_path / "local.json")
    assert local.returncode == 0, local.stderr
    assert "visit secret_root" in json.loads((tmp_path / "local.json").read_text())["output"]


@pytest.mark.parametrize("level", LEVELS)
def test_a_student_cannot_find_the_bundle_seed(tmp_path, fake_wheel, roots, level):
    """The hunt is told what to look for; the same hunt finds a copy of the seed planted in
    a folder the student may read (so a NOT-FOUND means hidden, not a blind hunt)."""
    if level == "process" and not grader_is_root():
        pytest.skip("at the process level only a root grader keeps the student out of its files")
    roots.append(root := build(tmp_path, "tree", fake_wheel))
    seed = str(settings_seed(root))
    text = (HOSTILE / "hunts_for_seed.py").read_text()
    hunt = tmp_path / "hunt.py"
    hunt.write_text(text.replace("@SEED_HEX_REVERSED@", seed.encode()[::-1].hex()).replace("@ROOT@", str(root)))
    assert seed not in hunt.read_text()
    env = {"ABGRADE_ISOLATION": "process" if level == "process" else ""}
    results = run_bundle(root, hunt, **env)
    assert "SEED-NOT-FOUND" in results["output"] and "SEED-FOUND" not in results["output"], results["output"]
    assert results["score"] == results["extra_data"]["max_score"]
    assert seed not in json.dumps(results)

    (root / "readable.txt").write_text(f"seed {seed}\n")  # the control: where a student may read
    results = run_bundle(root, hunt, **env)
    assert "SEED-FOUND" in results["output"] and "readable.txt" in results["output"], results["output"]


def test_run_autograder_in_process_uses_the_bundle_seed(tmp_path, fake_wheel, roots):
    """The function Gradescope's run ends in, called twice on one bundle."""
    roots.append(root := build(tmp_path, "tree", fake_wheel))
    (root / "submission" / "tree.py").write_text((FIXTURES / "tree" / "bug_strict_cutoff.py").read_text())
    assert comparable(run_autograder(root), "") == comparable(run_autograder(root), "")
