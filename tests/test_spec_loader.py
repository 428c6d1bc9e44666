"""Lab specs: the bundled one loads and its stored expectations hold; every broken spec
raises one SpecError that reads `file:line: field: problem`, pointing at the culprit.

Each broken spec in tests/fixtures/specs marks the line the error must name with the comment
`# SpecError here`, so the expected line lives next to the mistake.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.labs import get_lab
from grader.spec import Limits, SpecError, load_spec, spec_path

SPEC_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "specs"

MARKER = "# SpecError here"


def load_and_plan(path: Path) -> None:
    """Everything a grading run checks before it runs a submission: the generic fields
    (loader), then the lab's cases and random settings (adapter)."""
    spec = load_spec(path)
    get_lab(spec.lab).plans(spec, seed=0)


def marked_line(path: Path) -> int:
    [line] = [n for n, text in enumerate(path.read_text().splitlines(), start=1) if MARKER in text]
    return line


BROKEN = [
    ("invalid_yaml.yaml", "yaml"),
    ("unknown_top_field.yaml", "total_points"),
    ("unknown_check_kind.yaml", "checks.speed"),
    ("negative_points.yaml", "checks.nodes.points"),
    ("unknown_visibility.yaml", "checks.bounds.visibility"),
    ("unknown_case_visibility.yaml", "cases[0].visibility"),
    ("case_without_name.yaml", "cases[1].name"),
    ("duplicate_case_names.yaml", "cases[1].name"),
    ("tree_with_cycle.yaml", "cases[1].graph"),
    ("tree_with_shared_child.yaml", "cases[0].graph"),
    ("leaf_without_number.yaml", "cases[0].graph"),
    ("expect_missing.yaml", "cases[0].expect"),
    ("pruned_not_in_tree.yaml", "cases[0].expect.pruned"),
    ("unknown_random_setting.yaml", "random.width"),
]


@pytest.mark.parametrize(("file", "field"), BROKEN, ids=[f for f, _ in BROKEN])
def test_broken_spec_names_file_line_and_field(file, field):
    path = SPEC_FIXTURES / file
    with pytest.raises(SpecError) as caught:
        load_and_plan(path)
    error = caught.value
    assert str(error).startswith(f"{path}:{marked_line(path)}: {field}: "), str(error)
    assert (error.file, error.line, error.field) == (str(path), marked_line(path), field)
    assert error.problem and "\n" not in str(error)


@pytest.mark.parametrize("file", ["tree_with_cycle.yaml", "tree_with_shared_child.yaml", "leaf_without_number.yaml"])
def test_broken_tree_message_names_the_node(file):
    with pytest.raises(SpecError) as caught:
        load_and_plan(SPEC_FIXTURES / file)
    assert {"tree_with_cycle.yaml": "'b0'", "tree_with_shared_child.yaml": "'c0'", "leaf_without_number.yaml": "'b1'"}[
        file
    ] in caught.value.problem


def test_unknown_random_setting_is_caught_by_verify_too():
    spec = load_spec(SPEC_FIXTURES / "unknown_random_setting.yaml")
    with pytest.raises(SpecError, match=r"random\.width"):
        get_lab("tree").verify(spec)


def test_missing_spec_file_names_the_file(tmp_path):
    path = tmp_path / "nowhere.yaml"
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    assert str(caught.value).startswith(f"{path}: file: ")


def test_fixture_specs_that_should_load_do():
    for name in ("tree_minimal.yaml", "tree_tight_limits.yaml"):
        spec = load_spec(SPEC_FIXTURES / name)
        get_lab("tree").plans(spec, seed=0)
        assert get_lab("tree").verify(spec) == [], name


def test_bundled_tree_spec():
    spec = load_spec(spec_path("tree"))
    assert spec.lab == "tree"
    assert spec.cases[0]["name"] == "seed"
    assert len(spec.cases) == 11
    assert spec.limits == Limits(case_seconds=10, submission_seconds=120, memory_mb=2048, output_bytes=1_000_000)
    assert spec.random is not None and spec.random.count == 8
    assert get_lab("tree").verify(spec) == []


def test_seed_case_holds_the_course_facts():
    seed = load_spec(spec_path("tree")).cases[0]
    assert seed["expect"]["value"] == 4
    assert set(seed["expect"]["pruned"]) == {"d4", "e7", "e8", "e14"}


TOP_FIELDS = {"lab", "version", "title", "limits", "checks", "cases", "random"}
YAML_WORDS = {"yes", "no", "on", "off", "true", "false", "null"}  # keys YAML reads as bool/None
MINIMAL = (SPEC_FIXTURES / "tree_minimal.yaml").read_text().splitlines(keepends=True)
TOP_LEVEL_LINES = [n for n, text in enumerate(MINIMAL) if text[:1].isalpha()]  # before a top-level key


@settings(max_examples=25, deadline=None)
@given(
    key=st.from_regex(r"[a-z][a-z_]{0,11}", fullmatch=True).filter(lambda k: k not in TOP_FIELDS | YAML_WORDS),
    where=st.sampled_from(TOP_LEVEL_LINES),
)
def test_any_unknown_top_field_is_reported_where_it_is(tmp_path_factory, key, where):
    lines = [*MINIMAL[:where], f"{key}: 1\n", *MINIMAL[where:]]
    path = tmp_path_factory.mktemp("spec") / "spec.yaml"
    path.write_text("".join(lines))
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    assert str(caught.value).startswith(f"{path}:{where + 1}: {key}: ")


def test_every_spec_node_knows_its_place_so_errors_name_the_field_by_themselves(tmp_path):
    """Spec nodes carry their own field path (issue 15): a validator passes the node and
    the key, not a hand-written `cases[3].expect...` string."""
    from grader.labs.kit.fields import need
    from grader.spec.yaml_lines import field_path

    spec = load_spec(spec_path("tree"))
    case = spec.cases[2]
    assert case.path == "cases[2]" and case["expect"].path == "cases[2].expect"
    assert (
        field_path(spec.raw["cases"], 2) == "cases[2]"
        and field_path(case["expect"], "value") == "cases[2].expect.value"
    )
    with pytest.raises(SpecError) as error:
        need(spec, case["expect"], "missing_field", int, "a number")
    assert f"{spec.path}:" in str(error.value) and "cases[2].expect.missing_field: missing: a number" in str(
        error.value
    )
