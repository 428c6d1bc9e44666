"""The HTML report (`abgrade grade ... --html OUT`): one self-contained page with the score
per check kind, each failing test's feedback, and pictures: every tree case as SVG (nodes
coloured by which search read them, leaf values, the reference's windows, the root value,
the first divergence), tic-tac-toe boards, hidden tests withheld.

Pages are parsed into a small element tree (`Element`) and checked by class, the same way
for the page as written and for the DOM that headless Chromium renders from it (marked
slow: it runs a real browser, and saves a screenshot)."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grader.checks.expansions import first_divergence
from grader.cli import main
from grader.labs.tictactoe.picture import boards_html
from grader.labs.tree.judges import tree_details
from grader.labs.tree.picture import COLLAPSE_ABOVE, layout
from grader.report.html import render_html, write_html
from grader.results import GradeReport
from grader.results import TestResult as GradedTest  # (a Test* name would be collected)
from grader.sandbox import socket_folder
from reference.random_trees import random_tree
from reference.tree_bugs import BUGGY_SEARCHES
from reference.tree_search import alphabeta

STATUSES = ("both", "student-only", "reference-only", "pruned")
TREE_SUBMISSIONS = Path(__file__).resolve().parent / "fixtures" / "tree"


# --- a small DOM -------------------------------------------------------------------------------


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list[Element] = field(default_factory=list)
    text: str = ""

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def all(self, tag: str | None = None, *classes: str) -> list[Element]:
        """Descendants (self included) with this tag (None: any) and all these classes."""
        found = [self] if (tag in (None, self.tag) and set(classes) <= self.classes) else []
        for child in self.children:
            found += child.all(tag, *classes)
        return found

    def one(self, tag: str | None = None, *classes: str) -> Element:
        found = self.all(tag, *classes)
        assert len(found) == 1, f"{len(found)} <{tag} class={classes}>"
        return found[0]

    def full_text(self) -> str:
        return self.text + "".join(child.full_text() for child in self.children)


VOID = {"meta", "link", "br", "img", "input", "hr", "area", "base", "col", "source", "wbr"}


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        self.stack[-1].children.append(Element(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(Element("#text", {}, text=data))


def parse(page: str) -> Element:
    builder = _Builder()
    builder.feed(page)
    builder.close()
    return builder.root


def node_counts(svg: Element) -> Counter:
    return Counter(status for g in svg.all("g", "node") for status in STATUSES if status in g.classes)


def expected_counts(details: dict) -> Counter:
    """Statuses of every node of the tree, from the reads in `details` (nothing folded)."""
    graph, leaves = details["graph"], details["terminal_nodes"]
    nodes = set(graph) | set(leaves) | {c for kids in graph.values() for c in kids}
    seen, expected = set(details["seen"]), set(details["expected"])
    return Counter(
        {
            "both": len(seen & expected),
            "student-only": len(seen - expected),
            "reference-only": len(expected - seen),
            "pruned": len(nodes - seen - expected),
        }
    )


def cases(dom: Element) -> dict[str, Element]:
    return {d.one("span", "case-name").full_text(): d for d in dom.all("details", "case")}


# --- pages of real grading runs ----------------------------------------------------------------


@pytest.fixture(scope="module")
def strict(grade) -> GradeReport:
    return grade("bug_strict_cutoff")


@pytest.fixture(scope="module")
def strict_page(strict) -> str:
    return render_html(strict)


def test_page_loads_nothing_from_anywhere(strict_page):
    dom = parse(strict_page)
    links = [e.attrs[a] for e in dom.all() for a in ("src", "href") if a in e.attrs]
    assert all(link.startswith("#") for link in links), links
    assert not dom.all("link") and not [s for s in dom.all("script") if "src" in s.attrs]
    assert "url(" not in strict_page and "@import" not in strict_page
    assert strict_page.replace("http://www.w3.org/2000/svg", "").count("http") == 0


def test_score_table_has_each_check_kind(strict, strict_page):
    rows = {row.attrs["data-kind"]: row for row in parse(strict_page).all("tr", "kind")}
    assert list(rows) == list(strict.subtotals())
    for kind, (got, most) in strict.subtotals().items():
        assert ("ok" if got == most else "fail") in rows[kind].classes
        assert f"{got:g} / {most:g}" in rows[kind].full_text()


def test_every_failing_visible_test_shows_expected_and_seen(strict, strict_page):
    shown = {
        t.one("h3").full_text(): t.one("pre", "output").full_text()
        for t in parse(strict_page).all("div", "test", "failed")
    }
    failing = [t for t in strict.tests if not t.passed and t.visibility == "visible"]
    assert failing and len(shown) == len(failing)
    for test in failing:
        heading = next(h for h in shown if test.name in h)
        assert shown[heading] == test.output
    assert "First difference at read #8: you read c4, the reference reads b2." in strict_page


def test_every_visible_tree_case_is_drawn_with_what_each_search_read(strict, strict_page):
    drawn = cases(parse(strict_page))
    pictured = {t.case: t.details for t in strict.tests if t.details and t.visibility == "visible"}
    assert pictured and set(pictured) <= set(drawn)
    for name, details in pictured.items():
        svg = drawn[name].one("svg", "tree")
        assert node_counts(svg) == +expected_counts(details), name
        marked = {g.attrs["data-node"] for g in svg.all("g", "first-divergence")}
        index = first_divergence(details["seen"], details["expected"])
        assert marked == (
            set() if index is None else {s[index] for s in (details["seen"], details["expected"]) if index < len(s)}
        ), name


def test_the_tie_case_shows_the_extra_read_and_the_skipped_one(strict_page):
    svg = cases(parse(strict_page))["sibling-ties"].one("svg", "tree")
    by_node = {g.attrs["data-node"]: g for g in svg.all("g", "node")}
    assert {"student-only", "first-divergence"} <= by_node["c4"].classes
    assert {"both", "first-divergence"} <= by_node["b2"].classes
    assert "your read #8" in by_node["c4"].full_text()
    assert "the reference's read #8" in by_node["b2"].full_text()


def test_leaf_values_windows_and_root_value_are_shown(grade):
    dom = parse(render_html(grade("bug_no_pruning")))
    seed = cases(dom)["seed"]
    by_node = {g.attrs["data-node"]: g for g in seed.one("svg", "tree").all("g", "node")}
    assert by_node["e3"].one("text", "leaf-value").full_text() == "-5"
    assert by_node["a0"].one("text", "window").full_text() == "[-∞, ∞]"
    assert by_node["d3"].one("text", "window").full_text() == "[-∞, 0]"  # the seed's trace: c1 enters at beta 0
    assert not by_node["d4"].all("text", "window")  # the reference never enters d4
    assert {"student-only"} <= by_node["d4"].classes and {"student-only"} <= by_node["e14"].classes
    line = seed.one("p", "root-line")
    assert line.one("b", "expected").full_text() == "4" and line.one("b", "returned").full_text() == "4"


def test_a_wrong_root_value_is_marked(grade):
    seed = cases(parse(render_html(grade("bug_no_alternation"))))["seed"]
    returned = seed.one("p", "root-line").one("b", "returned")
    assert "wrong" in returned.classes and returned.full_text() == "9"
    assert "you returned 9" in seed.one("text", "root-value").full_text()


def test_hidden_tests_are_named_but_their_details_withheld(strict, strict_page):
    dom = parse(strict_page)
    hidden = [t for t in strict.tests if t.visibility != "visible"]
    withheld = [d for d in dom.all("details", "case") if "withheld" in d.classes]
    assert hidden and len(withheld) == len({t.case for t in hidden})
    for test in hidden:
        assert test.name in strict_page
    assert all(not d.all("svg") and not d.all("pre") for d in withheld)
    trees = [line for t in hidden for line in t.output.splitlines() if line.startswith("The tree: graph =")]
    assert trees and not any(tree in strict_page for tree in trees)  # the random trees' own text stays hidden ...
    # ... the smallest failing case made from one is shown (the spec reveals it), and only it
    examples = dom.one("section", "counterexamples").all("div", "counterexample")
    assert examples and strict_page.count("The tree: graph =") == len(examples)
    failed_hidden = sum(not t.passed for t in hidden)
    assert dom.one("p", "hidden-failures").full_text().startswith(f"{failed_hidden} hidden test(s) failed.")

    everything = parse(render_html(strict, show_hidden=True))
    assert not [d for d in everything.all("details", "case") if "withheld" in d.classes]
    assert not everything.all("p", "hidden-failures")
    assert len(everything.all("svg", "tree")) == len(dom.all("svg", "tree")) + len({t.case for t in hidden})
    assert len(everything.one("section", "counterexamples").all("div", "counterexample")) == len(examples)
    assert any(not t.passed for t in hidden) and "The tree: graph =" in render_html(strict, show_hidden=True)


def test_failing_cases_are_open_and_passing_ones_closed(strict_page):
    for name, case in cases(parse(strict_page)).items():
        assert ("open" in case.attrs) == ("failed" in case.classes and "withheld" not in case.classes), name


# --- trees drawn from details -----------------------------------------------------------------


def details_for(tree, bug: str) -> dict:
    wrong, right = BUGGY_SEARCHES[bug](tree), alphabeta(tree)
    return tree_details(tree, wrong.trace.order, right.trace.order, wrong.value, right.value)


def test_large_trees_fold_subtrees_neither_search_read():
    tree = random_tree(11, branching=(3, 4), depth=(4, 4), values="int", value_range=(-9, 9), tie_rate=0.3)
    assert len(tree) > COLLAPSE_ABOVE
    details = details_for(tree, "strict_cutoff")
    svg = parse(render_html(report_with(details))).one("svg", "tree")
    folded = svg.all("g", "collapsed")
    assert folded and all("pruned" in g.classes for g in folded)
    drawn = svg.all("g", "node")
    assert len(drawn) + sum(int(g.attrs["data-count"]) - 1 for g in folded) == len(tree)
    assert len(drawn) < len(tree) * 0.75
    for g in folded:
        assert g.one("text", "name").full_text() == f"{g.attrs['data-node']} +{int(g.attrs['data-count']) - 1}"


def test_small_trees_are_drawn_whole():
    tree = random_tree(3, branching=(2, 2), depth=(3, 3), values="int", value_range=(-9, 9))
    details = details_for(tree, "no_pruning")
    svg = parse(render_html(report_with(details))).one("svg", "tree")
    assert not svg.all("g", "collapsed") and node_counts(svg) == +expected_counts(details)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10**6),
    bug=st.sampled_from(sorted(BUGGY_SEARCHES)),
    depth=st.integers(1, 5),
    branching=st.integers(1, 4),
)
def test_layout_accounts_for_every_node_once_and_never_overlaps(seed, bug, depth, branching):
    tree = random_tree(
        seed, branching=(1, branching), depth=(1, depth), values="int", value_range=(-5, 5), tie_rate=0.3
    )
    details = details_for(tree, bug)
    nodes = layout(details)
    assert sum(max(n.hidden, 1) for n in nodes) == len(tree)
    assert len({n.name for n in nodes}) == len(nodes)
    seen, expected = set(details["seen"]), set(details["expected"])
    for n in nodes:
        assert n.status == (
            "both"
            if n.name in seen & expected
            else "student-only"
            if n.name in seen
            else "reference-only"
            if n.name in expected
            else "pruned"
        )
    by_name = {n.name: n for n in nodes}
    ends = sorted((n.x - n.width / 2, n.x + n.width / 2) for n in nodes if not any(c.parent == n.name for c in nodes))
    assert all(right <= left for (_, right), (left, _) in zip(ends, ends[1:])), "leaves overlap"
    for n in nodes:
        kids = [c.x for c in nodes if c.parent == n.name]
        if kids:
            assert min(kids) <= n.x <= max(kids)
        if n.parent:
            assert by_name[n.parent].depth == n.depth - 1


def test_details_that_cannot_be_drawn_leave_the_text():
    page = render_html(report_with({"view": "tree", "graph": None, "root": "a"}))
    assert "No picture of this tree" in page and "<svg" not in page
    assert "<svg" not in render_html(report_with({"view": "something else"}))


# --- tic-tac-toe boards --------------------------------------------------------------------------

BOARDS = {
    "view": "boards",
    "board": "xo./.x./..o",
    "seen": ["xo./.x./..o", "xox/.x./..o", "xox/ox./..o", "xox/oxo/..o"],
    "expected": ["xo./.x./..o", "xox/.x./..o", "xox/.xo/..o"],
}


def test_boards_show_the_position_and_the_first_divergent_expansion():
    dom = parse(boards_html(BOARDS))
    figures = dom.all("figure", "board-figure")
    assert [f.one("figcaption").full_text() for f in figures] == [
        "the position",
        "expansion #2, the last one in common",
        "your expansion #3",
        "the reference's expansion #3",
    ]
    assert {"student-only", "first-divergence"} <= figures[2].classes
    assert {"reference-only", "first-divergence"} <= figures[3].classes
    position = figures[0].one("svg", "board")
    assert [c.attrs["class"] for c in position.all("rect", "cell")] == [
        "cell x",
        "cell o",
        "cell empty",
        "cell empty",
        "cell x",
        "cell empty",
        "cell empty",
        "cell empty",
        "cell o",
    ]
    for figure in figures[2:]:  # ox. against .xo in the middle row
        assert len(figure.all("rect", "differs")) == 2
    assert "expanded 4 boards, the reference 3" in dom.full_text()


def test_boards_when_one_search_stops_early_or_both_agree():
    stopped = parse(boards_html({**BOARDS, "seen": BOARDS["expected"][:2]}))
    assert [f.one("figcaption").full_text() for f in stopped.all("figure")][-1] == "the reference's expansion #3"
    agree = parse(boards_html({**BOARDS, "seen": BOARDS["expected"]}))
    assert len(agree.all("svg", "board")) == 1 and "the same 3 boards" in agree.full_text()
    odd = parse(boards_html({**BOARDS, "board": "not a board"}))
    assert odd.one("code", "board-text").full_text() == "not a board"


def test_a_boards_case_in_a_report_is_withheld_when_hidden():
    visible = parse(render_html(report_with(BOARDS, lab="tictactoe")))
    assert len(visible.all("div", "boards")) == 1
    hidden = parse(render_html(report_with(BOARDS, lab="tictactoe", visibility="after_published")))
    assert not hidden.all("div", "boards") and "withheld" in cases(hidden)["case 1"].classes


# --- text, files and the command ----------------------------------------------------------------


def report_with(
    details: dict | None, lab: str = "tree", visibility: str = "visible", output: str = "expected 4, got 3"
) -> GradeReport:
    test = GradedTest("case 1: pruned", "pruned", 2, False, output, visibility, "case 1", [], details)
    return GradeReport(lab, "lab.py", [GradedTest("load", "load", 1, True, "ok"), test])


def test_everything_the_student_controls_is_escaped():
    report = report_with(None, output="<script>alert(1)</script> & <b>")
    report.student_output = "<img src=x onerror=alert(2)>"
    page = render_html(report)
    assert "<script>alert" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;" in page


def test_diagnosis_names_without_a_known_hint_still_show():
    report = report_with(None)
    report.tests[1].diagnoses = ["mystery"]
    dom = parse(render_html(report, hints={}))
    assert dom.one("li", "diagnosis").attrs["data-name"] == "mystery"


@pytest.mark.parametrize("lab", ["tree", "tictactoe"])
def test_state_kept_between_calls_shows_with_its_hint_by_default(lab):
    """Every lab's diagnosis (grader/labs/kit/state.py): the page's default hints have it."""
    from grader.labs.kit.state import STATE_HINT

    report = report_with(None, lab=lab)
    report.tests[1].diagnoses = ["state_between_calls"]
    dom = parse(render_html(report))
    assert dom.one("li", "diagnosis").attrs["data-name"] == "state_between_calls"
    assert html.escape(STATE_HINT) in render_html(report)


def test_write_html_creates_the_folder(tmp_path):
    out = tmp_path / "reports" / "alice.html"
    write_html(report_with(None), out)
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_grade_command_writes_the_page(tmp_path, capsys):
    out = tmp_path / "report.html"
    code = main(
        [
            "grade",
            str(TREE_SUBMISSIONS / "bug_strict_cutoff.py"),
            "--lab",
            "tree",
            "--seed",
            "1",
            "--html",
            str(out),
            "--quiet",
        ]
    )
    assert code == 1 and capsys.readouterr().out.strip().endswith("/75")
    dom = parse(out.read_text(encoding="utf-8"))
    assert dom.all("svg", "tree") and dom.one("li", "diagnosis").attrs["data-name"] == "strict_cutoff"


# --- in a real browser --------------------------------------------------------------------------

BROWSER_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]

# Appended to a copy of the page: opens every case, then records per status how many
# `g.node` elements the browser made into real SVG elements with a drawn box.
PROBE = """<pre id="probe"></pre><script>
setCases(true);
const counts = {};
for (const status of ["both", "student-only", "reference-only", "pruned", "first-divergence"]) {
  const drawn = [...document.querySelectorAll("g.node." + status)]
    .filter(g => g instanceof SVGGElement && g.getBBox().width > 0);
  counts[status] = drawn.length;
}
document.getElementById("probe").textContent = JSON.stringify(counts);
</script>"""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def run_browser(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    """Run headless Chromium in its own process group; on a timeout, kill that group only.
    Its TMPDIR is a short folder of its own: Chromium puts its singleton's Unix socket
    there, and aborts under a TMPDIR too long for one (a CI runner's, .ci/run's second run)."""
    short = tempfile.mkdtemp(prefix="abgrade-chromium-", dir=socket_folder.short_place())
    process = subprocess.Popen(
        [binary, *BROWSER_FLAGS, f"--user-data-dir={profile}", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "TMPDIR": short},
    )
    try:
        # a backstop for a hung browser, not a speed check: at load 60 a dump took over 60 s
        out, err = process.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    finally:
        shutil.rmtree(short, ignore_errors=True)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


@pytest.mark.slow
def test_report_renders_in_headless_chromium(grade, tmp_path):
    binary = chromium()
    if binary is None:
        pytest.skip("headless Chromium not found (Debian: apt-get install chromium); the browser test needs it")
    report = grade("bug_strict_cutoff")
    page = render_html(report, show_hidden=True)
    source = parse(page)
    report_file = tmp_path / "report.html"
    write_html(report, report_file, show_hidden=True)

    dumped = run_browser(binary, tmp_path / "profile", "--dump-dom", report_file.as_uri())
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    dom = parse(dumped.stdout)
    assert len(dom.all("svg", "tree")) == len(source.all("svg", "tree")) > 0
    assert node_counts(dom) == node_counts(source)
    assert len(dom.all("g", "first-divergence")) == len(source.all("g", "first-divergence")) > 0

    probe_file = tmp_path / "probe.html"
    probe_file.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    probed = run_browser(binary, tmp_path / "profile", "--dump-dom", probe_file.as_uri())
    counts = parse(probed.stdout).all("pre")[-1].full_text()
    expected = dict(node_counts(source))
    expected["first-divergence"] = len(source.all("g", "first-divergence"))
    assert {k: v for k, v in json.loads(counts).items() if v} == expected

    screenshot = tmp_path / "report.png"
    shot = run_browser(
        binary, tmp_path / "profile", f"--screenshot={screenshot}", "--window-size=1200,2000", report_file.as_uri()
    )
    assert shot.returncode == 0 and screenshot.exists(), shot.stderr[-2000:]
    assert png_size(screenshot) == (1200, 2000)
    assert screenshot.stat().st_size > 50_000  # a page with pictures, not a blank one


def test_a_real_tictactoe_report_draws_the_first_divergent_expansion():
    from grader.grading import grade_submission
    from grader.labs import get_lab
    from grader.spec import load_spec, spec_path

    fixture = Path(__file__).resolve().parent / "fixtures" / "tictactoe" / "bug_strict_cutoff.py"
    report = grade_submission(fixture, get_lab("tictactoe"), load_spec(spec_path("tictactoe")), seed=1)
    pruned = next(t for t in report.tests if t.name == "empty-board: pruned")
    assert pruned.details["view"] == "boards" and pruned.details["board"] == ".../.../..."
    page = render_html(report)
    assert page.count('class="board') >= 3  # the position and both sides of the divergence
    # the note under the boards gives the whole searches' counts, as the test's text does
    # (the boards listed for the picture stop at the first difference)
    for test in report.tests:
        if test.kind == "pruned" and test.details and test.details.get("view") == "boards":
            found = re.search(r"get_childs on ([\d,]+) boards; the reference on ([\d,]+)", test.output)
            yours, theirs = found.groups()
            assert f"Your search expanded {yours} boards, the reference {theirs};" in boards_html(test.details)
            assert int(yours.replace(",", "")) > len(test.details["seen"])


def test_boards_note_uses_the_totals_when_given():
    text = parse(boards_html({**BOARDS, "seen_total": 2442, "expected_total": 1345})).full_text()
    assert "expanded 2,442 boards, the reference 1,345" in text
