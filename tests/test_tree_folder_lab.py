"""The tree lab re-expressed as a lab folder (examples/labs/tree: game.py, reference.py,
spec.yaml, bugs/, variants/) gives the built-in tree lab's verdicts on every fixture of the
tree lab's tests (tests/fixtures/tree and tests/fixtures/diagnoses): the same pass or fail
per case and check kind, the same classic bugs named, the same score. Its spec holds the
built-in spec's cases and its game draws the built-in lab's random trees, so the two can't
drift apart. Every grading is real (student processes, sandbox), from a fixed seed."""

from __future__ import annotations

import re
import shutil
import uuid
from pathlib import Path

import pytest
import yaml

from grader.grading import grade_submission
from grader.lab_setup import load_lab
from grader.labs.kit.random_settings import rng
from grader.report.html import render_html
from grader.results import GradeReport
from reference.random_trees import random_tree

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
TREE_FOLDER = PROJECT / "examples" / "labs" / "tree"
SEED = 1


def explain(report: GradeReport) -> str:
    return "\n".join(f"{t.name}: {t.output}" for t in report.tests if not t.passed) or "(no failed test)"


def verdicts(report: GradeReport) -> dict[tuple[str | None, str], bool]:
    return {(test.case, test.kind): test.passed for test in report.tests}


def diagnoses(report: GradeReport) -> set[str]:
    return {name for test in report.tests for name in test.diagnoses}


def folder_spec_text(built_in: Path, **changes: object) -> str:
    """A built-in tree spec as the tree folder's: each case's tree becomes its `world` and
    its root the search's `call`; `changes` replace top-level fields (limits, say)."""
    raw = yaml.safe_load(built_in.read_text())
    cases = []
    for case in raw["cases"]:
        graph, leaves = case.get("graph", {}), case["terminal_nodes"]
        children = {child for kids in graph.values() for child in kids}
        root = case.get("root") or next(node for node in [*graph, *leaves] if node not in children)
        moved = {k: v for k, v in case.items() if k not in ("graph", "terminal_nodes", "root", "expect")}
        cases.append(
            {**moved, "world": {"graph": graph, "terminal_nodes": leaves}, "call": {"node": root, "max_player": True}}
        )
    spec = {**{k: v for k, v in raw.items() if k != "cases"}, "lab": "tree-folder", "cases": cases, **changes}
    return yaml.safe_dump(spec, sort_keys=False)


def test_the_tree_folders_spec_holds_the_built_in_specs_cases() -> None:
    """examples/labs/tree/spec.yaml can't drift from specs/tree.yaml: same cases, checks,
    limits and random settings."""
    mine = yaml.safe_load((TREE_FOLDER / "spec.yaml").read_text())
    built_in = yaml.safe_load(folder_spec_text(PROJECT / "specs" / "tree.yaml"))
    strip = lambda case: {k: v for k, v in case.items() if k != "expect"}  # noqa: E731
    assert [strip(case) for case in mine["cases"]] == built_in["cases"]
    for field in ("checks", "limits"):
        assert mine[field] == built_in[field], field
    # the folder shrinks its random cases with its game's own `smaller` hook, on the default
    # budget: the built-in spec's shrinking settings are its own
    shrinking = ("shrink", "reveal_counterexample")
    assert mine["random"] == {k: v for k, v in built_in["random"].items() if k not in shrinking}


@pytest.mark.parametrize("seed", [0, 1, 7, 123456])
def test_the_tree_folder_draws_the_built_in_labs_random_trees(seed: int) -> None:
    lab, spec = load_lab(str(TREE_FOLDER))
    settings = {k: tuple(v) if isinstance(v, list) else v for k, v in spec.random.params.items()}
    scale = settings.pop("scale")
    for index, (world, call) in enumerate(lab.random_cases(spec, seed)):
        graph, leaves = random_tree(rng(seed, index), **settings).to_mapping()
        assert world == {"graph": graph, "terminal_nodes": {leaf: value * scale for leaf, value in leaves.items()}}
        assert call == {"node": "a0", "max_player": True} or len(leaves) == 1


@pytest.fixture(scope="module")
def tree_labs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """(built-in lab and spec, folder lab and spec) for the bundled spec, the tight one and
    the tight one with a 2 s budget per submission (the fixture that hangs at import)."""
    folder = tmp_path_factory.mktemp("specs")
    tight = TESTS / "fixtures" / "specs" / "tree_tight_limits.yaml"
    short = folder / "short_built_in.yaml"
    short.write_text(tight.read_text().replace("submission_seconds: 10", "submission_seconds: 2"))
    pairs = {}
    for name, built_in in (("bundled", PROJECT / "specs" / "tree.yaml"), ("tight", tight), ("short", short)):
        mine = folder / f"{name}.yaml"
        mine.write_text(folder_spec_text(built_in))
        pairs[name] = (load_lab("tree", built_in), load_lab(str(TREE_FOLDER), mine))
    pairs["bundled"] = (load_lab("tree"), load_lab(str(TREE_FOLDER)))
    return pairs


# and the swapped window cut off on the value, which the folder names by its second way
# (bugs/window_swapped/cutoff_on_value.py)
TREE_FIXTURES = [
    *sorted((TESTS / "fixtures" / "tree").glob("*.py")),
    *sorted((TESTS / "fixtures" / "diagnoses").glob("*.py")),
    TESTS / "fixtures" / "diagnoses" / "other_ways" / "window_swapped_aima.py",
]
SPEC_OF = {"hostile_tie_loop": "tight", "hostile_recursion_bomb": "tight", "hostile_import_loop": "short"}


@pytest.mark.slow
@pytest.mark.parametrize("path", TREE_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_tree_folder_gives_the_built_in_labs_verdicts(tree_labs: dict, path: Path, tmp_path: Path) -> None:
    """The property the issue asks for: on every fixture of the tree lab's tests, the same
    pass or fail for every (case, check kind), and the same classic bugs named."""
    (built_in, built_in_spec), (folder, folder_spec) = tree_labs[SPEC_OF.get(path.stem, "bundled")]
    copy = tmp_path / f"{path.stem}_{uuid.uuid4().hex[:8]}.py"  # a helper process carries its own name
    shutil.copyfile(path, copy)
    expected = grade_submission(copy, built_in, built_in_spec, seed=SEED)
    got = grade_submission(copy, folder, folder_spec, seed=SEED)
    assert verdicts(got) == verdicts(expected), f"built-in:\n{explain(expected)}\n\nfolder:\n{explain(got)}"
    assert diagnoses(got) == diagnoses(expected)
    assert (got.score, got.max_score) == (expected.score, expected.max_score)


def test_a_tree_folder_report_draws_the_searches(tree_labs: dict) -> None:
    (_, _), (lab, spec) = tree_labs["bundled"]
    report = grade_submission(TESTS / "fixtures" / "tree" / "bug_strict_cutoff.py", lab, spec, seed=SEED)
    page = render_html(report)
    assert page.count('<svg class="tree"') >= 2
    assert re.search(r'<g class="node student-only first-divergence" data-state="c4">', page)
    assert "Pruning Node -&gt; c4" in page and "strict_cutoff" in page
