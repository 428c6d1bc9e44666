"""The kit's board pictures (grader/labs/kit/pictures/, issue 24 point 3): Connect Four boards,
Nim heaps, tic-tac-toe boards and the two views the labs build from them (`"positions"`:
captioned positions side by side; `"expansions"`: the first expansion where two searches
part), and the labs' own details: the connect4 and agents labs' moves, the negamax lab's
trees, boards and heaps. Drawn from plain details, checked by class in the small DOM of
tests/test_html_report.py; every string from the student's side escaped. The five labs'
real reports, in headless Chromium: tests/test_feedback_every_lab.py."""

from __future__ import annotations

import json

import pytest

from grader.labs import get_lab
from grader.labs.agents.cases import Position as AgentsPosition
from grader.labs.agents.picture import move_details as agents_move
from grader.labs.agents.picture import position_details as agents_position
from grader.labs.connect4.cases import state_of
from grader.labs.connect4.picture import entry_details, move_details, position_details
from grader.labs.kit.pictures.connect4 import connect4_svg, dropped_cell
from grader.labs.kit.pictures.nim import heaps_svg
from grader.labs.kit.pictures.positions import board_picture, expansions_html, positions_html
from grader.labs.negamax.cases import Position as NegamaxPosition
from grader.labs.negamax.picture import move_details as negamax_move
from grader.labs.negamax.picture import search_details
from grader.report.html import render_html
from grader.results import GradeReport
from grader.results import TestResult as Graded  # (a Test* name would be collected)
from reference.games import connect4, load_game
from reference.negamax import alphabeta_value
from tests.test_html_report import parse

HOSTILE = '<script>alert("x")</script>&'


def classes_of(svg) -> list[str]:
    return [c.attrs["class"] for c in svg.all("circle")]


# --- Connect Four ------------------------------------------------------------------------------


def test_a_connect4_board_has_42_holes_its_stones_and_column_numbers():
    rows = [".......", ".......", ".......", ".......", "...O...", "..XXO.."]
    svg = parse(connect4_svg(rows, marked={5 * 7 + 2})).one("svg", "connect4")
    drawn = classes_of(svg)
    assert drawn.count("hole") == 42 - 4 and drawn.count("disc first") == 2 and drawn.count("disc second") == 2
    assert drawn.count("marked") == 1
    assert [t.full_text() for t in svg.all("text", "column")] == [str(c) for c in range(1, 8)]
    assert [t.full_text() for t in svg.all("text", "stone")] == ["O", "X", "X", "O"]  # top row first, left to right


def test_something_that_is_not_a_board_is_escaped_text():
    page = connect4_svg([HOSTILE] * 6)
    assert "<script>" not in page and parse(page).one("code", "board-text")
    assert "<script>" not in connect4_svg(["......."] * 6, pieces={"X": ("first", HOSTILE)})  # a label is escaped


def test_the_stone_a_move_drops_is_found():
    before = [".......", ".......", ".......", ".......", ".......", "...X..."]
    after = [".......", ".......", ".......", ".......", "...O...", "...X..."]
    assert dropped_cell(before, after) == 4 * 7 + 3
    assert dropped_cell(before, before) is None and dropped_cell(before, "nonsense") is None


def test_connect4_move_details_mark_both_moves():
    State = state_of("4455")
    moves = [connect4.encode(s) for s in connect4.next_states(State, "X")]
    details = move_details(State, moves[0], [moves[2], moves[5]], 5)
    json.dumps(details)  # plain data: the gradebook keeps it
    figures = parse(positions_html(details)).all("figure", "board-figure")
    assert [f.one("figcaption").full_text() for f in figures] == [
        "the position (X to move)",
        "your move",
        "an optimal move (1 of 2)",
    ]
    assert {"student-only", "first-divergence"} <= figures[1].classes and "reference-only" in figures[2].classes
    assert all(len(f.all("circle", "marked")) == 1 for f in figures[1:])
    assert not figures[0].all("circle", "marked")


def test_connect4_a_students_made_up_state_is_shown_as_text():
    details = move_details(state_of(""), {"unencodable": HOSTILE}, [], 1)
    page = positions_html(details)
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_connect4_a_wrong_cache_entry_is_drawn_next_to_the_position():
    State = state_of("44")
    entry = connect4.encode(connect4.next_states(State, "X")[0])
    figures = parse(positions_html(entry_details(State, entry, 1, "note"))).all("figure")
    assert [f.one("figcaption").full_text() for f in figures] == [
        "the position (X to move)",
        "the entry's state, limit 1",
    ]
    assert len(figures[1].all("circle", "disc")) == 3


# --- Nim ---------------------------------------------------------------------------------------


def test_nim_heaps_show_who_is_to_move_and_what_a_move_took():
    svg = parse(heaps_svg([[1, 0, 3], 1], taken=[0, 2, 0], marked={1})).one("svg", "nim")
    heaps = svg.all("g", "heap")
    assert [h.attrs["data-size"] for h in heaps] == ["1", "0", "3"]
    assert len(heaps[1].all("circle", "taken")) == 2 and heaps[1].all("rect", "marked")
    assert svg.one("text", "to-move").full_text() == "player 1 to move"
    assert "<script>" not in heaps_svg(HOSTILE)


def test_nim_a_huge_heap_is_cut():
    svg = parse(heaps_svg([500])).one("svg", "nim")
    assert len(svg.all("circle", "token")) == 30 and "+470" in svg.full_text()


# --- the two views -------------------------------------------------------------------------------


def test_positions_escape_captions_and_notes_and_ignore_junk():
    details = {
        "view": "positions",
        "game": "tictactoe",
        "note": HOSTILE,
        "figures": [{"state": "x../.o./...", "caption": HOSTILE, "role": HOSTILE, "marked": ["a", 4]}, "junk"],
    }
    page = board_picture(details)
    assert "<script>" not in page
    figure = parse(page).one("figure", "board-figure")
    assert "position" in figure.classes and len(figure.all("rect", "differs")) == 1


def test_expansions_of_nim_mark_the_heaps_that_differ():
    details = {
        "view": "expansions",
        "game": "nim",
        "noun": "states",
        "position": [[1, 2], 0],
        "seen": [[[1, 2], 0], [[0, 2], 1]],
        "expected": [[[1, 2], 0], [[1, 1], 1]],
    }
    dom = parse(expansions_html(details))
    captions = [f.one("figcaption").full_text() for f in dom.all("figure")]
    assert captions == [
        "the position",
        "expansion #1, the last one in common",
        "your expansion #2",
        "the reference's expansion #2",
    ]
    assert all(len(f.all("rect", "marked")) == 2 for f in dom.all("figure")[2:])
    assert "Your search expanded 2 states, the reference 2; they first differ at expansion #2." in dom.full_text()


# --- the labs' details ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "moves", "depth", "svg_class"), [("ttt", (1, 5), None, "board"), ("conn", (4, 4, 3), 3, "connect4")]
)
def test_agents_a_wrong_move_is_drawn_next_to_the_optimal_ones(game, moves, depth, svg_class):
    position = AgentsPosition(game, moves, depth)
    details = agents_move(position, 2, [3, 7] if game == "ttt" else [2, 5])
    json.dumps(details)
    figures = parse(get_lab("agents").picture(details)).all("figure")
    assert [f.one("figcaption").full_text() for f in figures][1:] == [
        "your move: 2",
        "optimal: 3, 7" if game == "ttt" else "optimal: 2, 5",
    ]
    assert all(f.all("svg", svg_class) for f in figures)
    marked = "differs" if game == "ttt" else "marked"
    assert [len(f.all(None, marked)) for f in figures] == [0, 1, 2]
    assert len(parse(get_lab("agents").picture(agents_position(position))).all("figure")) == 1


def test_agents_connect_four_stones_are_red_and_yellow():
    details = agents_position(AgentsPosition("conn", (4, 4), 3))
    svg = parse(get_lab("agents").picture(details)).one("svg", "connect4")
    assert [t.full_text() for t in svg.all("text", "stone")] == ["Y", "R"]  # yellow on red, top row first
    assert [c.attrs["class"] for c in svg.all("circle", "disc")] == ["disc second", "disc first"]


def negamax_details(name: str, seen_from_reference, **params) -> tuple[dict, list]:
    game = load_game(name, **params)
    position = NegamaxPosition(game, game.start, 0)
    trace = list(alphabeta_value(game, game.start, 0).trace)
    seen = seen_from_reference(trace)
    return search_details(position, seen, trace, (len(seen), len(trace))), trace


def test_negamax_a_game_tree_shows_the_expanded_nodes_and_leaves_as_unobserved():
    details, trace = negamax_details("tree", lambda trace: trace[:2] + ["c6"] + trace[3:])
    svg = parse(get_lab("negamax").picture(details)).one("svg", "tree")
    statuses = {g.attrs["data-node"]: g.classes for g in svg.all("g", "node")}
    assert "both" in statuses["a"] and "unobserved" in statuses["d1"]
    assert "first-divergence" in statuses[trace[2]]
    assert [t.full_text() for t in svg.all("text", "role")][:2] == ["P0", "P1"]
    assert "your expansion #3" in svg.full_text()


def test_negamax_tictactoe_and_nim_show_the_first_divergent_expansion():
    for name, svg_class in (("tictactoe", "board"), ("nim", "nim")):
        details, trace = negamax_details(name, lambda trace: trace[:3] + trace[4:])
        json.dumps(details)
        dom = parse(get_lab("negamax").picture(details))
        assert len(dom.all("svg", svg_class)) == 4, name
        assert "they first differ at expansion #4" in dom.full_text()


def test_negamax_a_nim_move_shows_the_tokens_taken():
    game = load_game("nim")
    position = NegamaxPosition(game, game.start, 0)
    moves = [game.encode(s) for s in position.successors()]
    dom = parse(get_lab("negamax").picture(negamax_move(position, moves[0], moves[1:2])))
    yours, best = dom.all("figure")[1:]
    assert len(yours.all("circle", "taken")) == 1 and len(best.all("circle", "taken")) == 1


# --- in a report -------------------------------------------------------------------------------------


def test_a_case_draws_each_failed_tests_picture_once_and_drops_one_another_shows():
    State = state_of("44")
    moves = [connect4.encode(s) for s in connect4.next_states(State, "X")]
    position, move = position_details(State), move_details(State, moves[0], [moves[1]], 3)
    tests = [
        Graded("load", "load", 1, True, "ok"),
        Graded("c: value", "value", 1, False, "v", case="c", details=position),
        Graded("c: nodes", "nodes", 1, False, "n", case="c", details=position),
        Graded("c: choice", "choice", 1, False, "m", case="c", details=move),
    ]
    dom = parse(render_html(GradeReport("connect4", "lab.py", tests)))
    assert len(dom.all("div", "boards")) == 1  # the position alone is in the move's picture
    assert len(dom.all("svg", "connect4")) == 3


def test_negamax_states_a_hostile_search_made_up_are_escaped_text():
    """The observer sends a state it can't encode as {"unencodable": repr}; a tree search may
    name nodes that aren't in the tree. Neither reaches the page unescaped."""
    for name in ("tictactoe", "nim", "tree"):
        details, trace = negamax_details(name, lambda trace: trace[:1] + [{"unencodable": HOSTILE}, HOSTILE])
        page = render_html(
            GradeReport(
                "negamax", "lab.py", [Graded("c: nodes", "nodes", 1, False, HOSTILE, case="c", details=details)]
            )
        )
        assert "<script>alert" not in page, name
        assert parse(page).all("svg"), name


def test_expansions_cut_to_the_divergence_keep_their_numbers():
    """Details keep only the last expansion in common and the two that differ (a search
    that parts after thousands of expansions would fill the gradebook otherwise)."""
    details = {
        "view": "expansions",
        "game": "tictactoe",
        "position": ".../.../...",
        "offset": 2441,
        "seen": ["x../.../...", "xo./.../..."],
        "expected": ["x../.../...", "x../.o./..."],
        "seen_total": 5000,
        "expected_total": 4000,
    }
    dom = parse(expansions_html(details))
    assert [f.one("figcaption").full_text() for f in dom.all("figure")][1:] == [
        "expansion #2,442, the last one in common",
        "your expansion #2,443",
        "the reference's expansion #2,443",
    ]
    assert "they first differ at expansion #2,443." in dom.full_text()
    # cut before they part (the observer keeps a prefix of a very long trace): the totals say so
    cut = parse(expansions_html({**details, "seen": [], "expected": [], "offset": 3000}))
    assert "Your search expanded 5,000 boards, the reference 4,000; the first 3,000 are the same." in cut.full_text()
