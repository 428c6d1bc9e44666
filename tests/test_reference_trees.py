"""The reference solver for explicit game trees: validation, the course's tree, and properties on random trees."""

import math
import random
from math import inf

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.random_trees import level_letters, random_tree, random_trees
from reference.tree_bugs import BUG_HINTS, BUGGY_CALLS, BUGGY_SEARCHES, buggy_calls
from reference.tree_search import COURSE_RULES, SearchResult, SearchRules, alphabeta, minimax, true_value
from reference.trees import GameTree, TreeError

# The course's tree (facts from the `tree` lab's handout).
COURSE_GRAPH = {
    "a0": ["b0", "b1"],
    "b0": ["c0", "c1"],
    "b1": ["c2", "c3"],
    "c0": ["d0", "d1", "d2"],
    "c1": ["d3", "d4"],
    "c2": ["d5", "d6"],
    "c3": ["d7", "d8"],
    "d0": ["e0"],
    "d1": ["e1", "e2", "e3"],
    "d2": ["e4"],
    "d3": ["e5", "e6"],
    "d4": ["e7", "e8"],
    "d5": ["e9", "e10"],
    "d6": ["e11"],
    "d7": ["e12"],
    "d8": ["e13", "e14"],
}
COURSE_LEAVES = {
    "e0": -1, "e1": 2, "e2": 3, "e3": -5, "e4": 0, "e5": 4, "e6": 7, "e7": 2,
    "e8": 6, "e9": 9, "e10": 8, "e11": 1, "e12": 4, "e13": 0, "e14": 5,
}  # fmt: skip
COURSE_ALPHAS_BETAS = [
    ("d0", -inf, -1), ("c0", -1, inf), ("d1", -1, 2), ("d1", -1, 2), ("d1", -1, -5),
    ("c0", -1, inf), ("d2", -1, 0), ("c0", 0, inf), ("b0", -inf, 0), ("d3", -inf, 0),
    ("d3", -inf, 0), ("c1", 4, 0), ("b0", -inf, 0), ("a0", 0, inf), ("d5", 0, 9),
    ("d5", 0, 8), ("c2", 8, inf), ("d6", 8, 1), ("c2", 8, inf), ("b1", 0, 8),
    ("d7", 0, 4), ("c3", 4, 8), ("d8", 4, 0), ("c3", 4, 8), ("b1", 0, 4), ("a0", 4, inf),
]  # fmt: skip

# MIN node b1 sees beta fall to 3 == alpha after its first child: the course cuts c3, a strict `>` does not.
TIE_GRAPH = {"a0": ["b0", "b1"], "b0": ["c0", "c1"], "b1": ["c2", "c3"]}
TIE_LEAVES = {"c0": 3, "c1": 5, "c2": 3, "c3": 1}


@pytest.fixture(scope="module")
def course_tree() -> GameTree:
    return GameTree.from_mapping(COURSE_GRAPH, COURSE_LEAVES)


# --- validation --------------------------------------------------------------------------------

INVALID = {
    "cycle without root": ({"a": ["b"], "b": ["a"]}, {}, None, "'a' -> 'b' -> 'a' is a cycle"),
    "self loop": ({"a": ["a", "x"]}, {"x": 1}, None, "'a' -> 'a' is a cycle"),
    "cycle off the root": ({"a": ["b"], "c": ["d"], "d": ["c"]}, {"b": 1}, None, "'c' -> 'd' -> 'c'"),
    "shared child": (
        {"a": ["b", "c"], "b": ["d"], "c": ["d"]},
        {"d": 1},
        None,
        "node 'd' is a child of both 'b' and 'c'",
    ),
    "duplicate child": ({"a": ["b", "b"]}, {"b": 1}, None, "node 'a' lists child 'b' twice"),
    "no children": ({"a": ["b"], "b": []}, {}, None, "node 'b' has an empty list of children"),
    "leaf without value": ({"a": ["b0", "b3"]}, {"b0": 1}, None, "node 'b3' has no children and no value"),
    "bool value": ({"a": ["b"]}, {"b": True}, None, "leaf 'b' has value True, which is not a number"),
    "string value": ({"a": ["b"]}, {"b": "3"}, None, "leaf 'b' has value '3', which is not a number"),
    "nan value": ({"a": ["b"]}, {"b": math.nan}, None, "leaf 'b' has value nan"),
    "infinite value": ({"a": ["b"]}, {"b": -math.inf}, None, "leaf 'b' has value -inf"),
    "internal and leaf": (
        {"a": ["b"], "b": ["c"]},
        {"b": 1, "c": 2},
        None,
        "node 'b' has both children (in graph) and a value",
    ),
    "unreachable leaf": ({"a": ["b"]}, {"b": 1, "z": 2}, None, "node 'z' is not reachable from the root 'a'"),
    "two roots": ({"a": ["x"], "b": ["y"]}, {"x": 1, "y": 2}, None, "2 nodes are nobody's child ('a', 'b')"),
    "two lone leaves": ({}, {"x": 1, "y": 2}, None, "2 nodes are nobody's child ('x', 'y')"),
    "empty tree": ({}, {}, None, "the tree is empty"),
    "int child name": ({"a": [1]}, {1: 2}, None, "node 1 (a child of 'a') is of type int"),
    "int key": ({1: ["b"]}, {"b": 2}, None, "node 1 (a key of graph) is of type int"),
    "children as a string": ({"a": "bc"}, {}, None, "node 'a' has children 'bc'"),
    "graph not a mapping": ([("a", ["b"])], {"b": 1}, None, "graph must map each node"),
    "root with a parent": ({"a": ["b"]}, {"b": 1}, "b", "root 'b' is a child of 'a'"),
    "root not in tree": ({"a": ["b"]}, {"b": 1}, "zz", "root 'zz' is not a node of the tree"),
}


@pytest.mark.parametrize("graph, leaves, root, message", INVALID.values(), ids=INVALID.keys())
def test_invalid_trees_are_rejected_with_a_message_naming_the_node(graph, leaves, root, message):
    with pytest.raises(TreeError) as error:
        GameTree.from_mapping(graph, leaves, root)
    assert message in str(error.value)


def test_tree_error_is_a_value_error():
    assert issubclass(TreeError, ValueError)


def test_direct_construction_is_validated_too():
    with pytest.raises(TreeError, match="node 'b' has no children and no value"):
        GameTree("a", {"a": ("b",)}, {})


def test_numbers_keep_their_kind_and_numpy_numbers_become_python_ones():
    np = pytest.importorskip("numpy")
    tree = GameTree.from_mapping({"a": ["b", "c", "d"]}, {"b": np.int64(3), "c": np.float64(2.5), "d": -1.0})
    assert tree.values == {"b": 3, "c": 2.5, "d": -1.0}
    assert [type(tree.values[leaf]) for leaf in "bcd"] == [int, float, float]


# --- the tree's layout -------------------------------------------------------------------------


def test_course_tree_layout(course_tree):
    assert len(course_tree) == 31 and course_tree.root == "a0"
    assert course_tree.nodes()[:6] == ["a0", "b0", "c0", "d0", "e0", "d1"]
    assert len(course_tree.internal_nodes()) == 16 and len(course_tree.leaves()) == 15
    assert course_tree.subtree("c1") == ["c1", "d3", "e5", "e6", "d4", "e7", "e8"]
    assert course_tree.parent("e14") == "d8" and course_tree.parent("a0") is None
    assert course_tree.depth("a0") == 0 and course_tree.depth("e3") == 4
    assert course_tree.is_max("c2") and not course_tree.is_max("d2")
    assert course_tree.is_leaf("e7") and not course_tree.is_leaf("d4")
    with pytest.raises(KeyError):
        course_tree.depth("zz")


def test_to_mapping_round_trips(course_tree):
    graph, leaves = course_tree.to_mapping()
    assert graph == COURSE_GRAPH and leaves == COURSE_LEAVES
    assert GameTree.from_mapping(graph, leaves) == course_tree
    assert hash(GameTree.from_mapping(graph, leaves)) == hash(course_tree)


def test_given_root_is_accepted_when_it_is_the_root():
    assert GameTree.from_mapping(TIE_GRAPH, TIE_LEAVES, root="a0").root == "a0"


# --- the course's tree ---------------------------------------------------------------------------


def test_course_tree_alphabeta(course_tree):
    result = alphabeta(course_tree)
    trace = result.trace
    assert result.value == 4
    assert result.nodes == 27
    assert trace.order == [node for node in course_tree.nodes() if node not in trace.pruned]
    assert trace.pruned == {"d4", "e7", "e8", "e14"}
    assert trace.pruned_roots == ["d4", "e14"]
    assert trace.alphas_betas == COURSE_ALPHAS_BETAS
    assert trace.windows["c1"] == (-inf, 0) and trace.windows["d6"] == (8, inf)
    assert trace.returned["c1"] == 4  # fail-soft: beyond c1's window
    assert len(trace.expanded) == 15 and len(trace.opened) == 12


def test_course_tree_fail_hard(course_tree):
    hard = alphabeta(course_tree, fail="hard")
    assert hard.value == 4
    assert hard.trace.order == alphabeta(course_tree).trace.order
    assert hard.trace.returned["c1"] == 0  # clamped to c1's window (-inf, 0)


def test_course_tree_minimax(course_tree):
    result = minimax(course_tree)
    assert result.value == 4 == true_value(course_tree)
    assert result.trace.order == course_tree.nodes() and not result.trace.pruned


def test_lone_leaf_is_a_tree():
    tree = GameTree.from_mapping({}, {"a0": -3.5})
    assert len(tree) == 1 and tree.root == "a0" and tree.is_leaf("a0")
    result = alphabeta(tree)
    assert result.value == -3.5 == true_value(tree)
    assert result.trace.order == result.trace.opened == ["a0"] and not result.trace.pruned


def test_equal_bounds_cut_and_a_strict_cutoff_reads_more():
    tree = GameTree.from_mapping(TIE_GRAPH, TIE_LEAVES)
    course = alphabeta(tree)
    strict = BUGGY_SEARCHES["strict_cutoff"](tree)
    assert course.value == strict.value == 3
    assert ("b1", 3, 3) in course.trace.alphas_betas
    assert course.trace.pruned_roots == ["c3"]
    assert strict.trace.order == tree.nodes() and strict.nodes > course.nodes


def test_every_bug_has_a_hint():
    assert set(BUG_HINTS) == set(BUGGY_SEARCHES)
    assert {"no_pruning", "strict_cutoff", "alpha_never_updated", "beta_never_updated",
            "reversed_children", "no_alternation", "min_at_root"} <= set(BUGGY_SEARCHES)  # fmt: skip
    assert all(hint and "\n" not in hint for hint in BUG_HINTS.values())


def test_bugs_change_the_course_trees_reads(course_tree):
    reference = alphabeta(course_tree).trace.order
    changed = {name for name, search in BUGGY_SEARCHES.items() if search(course_tree).trace.order != reference}
    # strict_cutoff needs a tie (see the test above); max_starts_at_zero a MAX node whose
    # children are all negative, which the course tree doesn't have
    assert changed == set(BUGGY_SEARCHES) - {"strict_cutoff", "max_starts_at_zero"}


def test_the_bug_settings_are_off_in_the_course_search():
    assert SearchRules() == COURSE_RULES and (COURSE_RULES.child_window, COURSE_RULES.cut_test) == ("passed", "bounds")
    assert not COURSE_RULES.late_cutoff and not COURSE_RULES.swap_updates


def test_four_more_bugs_read_what_their_mistake_reads_on_the_course_tree(course_tree):
    """The course's search reads 27 nodes and never d4, e7, e8, e14 (value 4)."""
    reference = alphabeta(course_tree).trace.order

    def extra_and_missed(name: str) -> tuple[list[str], list[str], float]:
        result = BUGGY_SEARCHES[name](course_tree)
        order = result.trace.order
        return [n for n in order if n not in reference], [n for n in reference if n not in order], result.value

    # one child late: c1 reads d4 (down its first child, e7, where the window it was handed is
    # already closed) and d8 reads e14 before they stop; the values are the course's
    assert extra_and_missed("late_cutoff") == (["d4", "e7", "e14"], [], 4)
    # each child on (-inf, inf): nothing below the root prunes, and the root's own window can't
    assert extra_and_missed("window_not_passed") == (["d4", "e7", "e8", "e14"], [], 4)
    # (beta, alpha) = (inf, -inf) below the root: a MIN child stops after its first child
    assert extra_and_missed("window_swapped")[2] == 9 and "c1" in extra_and_missed("window_swapped")[1]
    # a MAX node lowers beta to its first child's value, and stops where it should go on
    assert extra_and_missed("bound_updates_swapped")[2] == 9


def test_a_window_not_passed_down_prunes_only_at_the_called_node(course_tree):
    """Called at the root below its value 4, (-inf, 0): b0's subtree (value 0) is read whole,
    d4 included, and only the root's own cut-off stops b1."""
    order = BUGGY_CALLS["window_not_passed"](course_tree, "a0", -inf, 0, True).trace.order
    assert order == ["a0", *course_tree.subtree("b0")]
    assert alphabeta(course_tree, "a0", -inf, 0, True).trace.order == [n for n in order if n not in ("d4", "e7", "e8")]


def test_a_swapped_window_reads_as_either_way_of_testing_the_cutoff():
    """Below a node called with a narrowed window, (beta, alpha) has alpha > beta: a cut-off
    on the bounds stops at once, AIMA's `if v <= alpha: return v` only if the value allows."""
    tree = GameTree.from_mapping({"a": ["b", "c"], "b": ["d", "e"], "c": ["f", "g"]}, {"d": 3, "e": 5, "f": 2, "g": 9})
    on_bounds, on_value, *fail_hard = buggy_calls(">=")["window_swapped"](tree, "a", 0, 1, True)
    assert len(fail_hard) == 5  # its fail-hard forms (reference.tree_bugs.fail_hard_forms)
    assert on_bounds.trace.order == ["a", "b", "d"] and on_value.trace.order == ["a", "b", "d", "e"]
    assert BUGGY_CALLS["window_swapped"](tree, "a", 0, 1, True).trace.order == on_bounds.trace.order


# --- random trees ------------------------------------------------------------------------------


def test_level_letters():
    assert [level_letters(n) for n in (0, 1, 25, 26, 27, 701, 702)] == ["a", "b", "z", "aa", "ab", "zz", "aaa"]


def test_random_trees_are_reproducible():
    assert random_tree(7) == random_tree(7)
    assert random_trees(3, 5) == random_trees(random.Random(3), 5)
    assert len({hash(tree) for tree in random_trees(0, 20)}) > 1


def test_random_tree_shape_follows_the_ranges():
    for tree in random_trees(11, 30, branching=(1, 3), depth=(1, 3), values="float", value_range=(-2, 2)):
        assert all(1 <= len(kids) <= 3 for kids in tree.children.values())
        assert all(1 <= tree.depth(leaf) <= 3 for leaf in tree.leaves())
        assert all(-2 <= value <= 2 and round(value, 1) == value for value in tree.values.values())
        for level in range(4):
            names = [node for node in tree.nodes() if tree.depth(node) == level]  # left to right
            assert names == [f"{level_letters(level)}{number}" for number in range(len(names))]


def test_random_trees_are_uneven_and_have_ties():
    trees = random_trees(5, 30, tie_rate=1.0)
    assert any(len({tree.depth(leaf) for leaf in tree.leaves()}) > 1 for tree in trees)
    assert any(min(tree.values.values()) < 0 for tree in trees)
    for tree in trees:
        for kids in tree.children.values():
            leaf_values = {tree.values[kid] for kid in kids if tree.is_leaf(kid)}
            assert len(leaf_values) <= 1  # with tie_rate 1, every leaf copies its first leaf sibling


def test_random_tree_rejects_bad_ranges():
    for kwargs in ({"branching": (0, 2)}, {"depth": (3, 2)}, {"values": "str"}, {"tie_rate": 2}):
        with pytest.raises(ValueError):
            random_tree(0, **kwargs)


@st.composite
def game_trees(draw, max_branching=3, max_depth=4):
    low_branching = draw(st.integers(1, max_branching))
    low_depth = draw(st.integers(0, max_depth))
    low_value = draw(st.integers(-9, 0))
    return random_tree(
        draw(st.integers(0, 2**32)),
        branching=(low_branching, draw(st.integers(low_branching, max_branching))),
        depth=(low_depth, draw(st.integers(low_depth, max_depth))),
        values=draw(st.sampled_from(["int", "float"])),
        value_range=(low_value, draw(st.integers(low_value, 9))),
        tie_rate=draw(st.sampled_from([0.0, 0.25, 0.75])),
    )


PROPERTIES = settings(max_examples=100, deadline=None)


def is_preorder_subsequence(tree: GameTree, order: list[str]) -> bool:
    read = set(order)
    return len(read) == len(order) and order == [node for node in tree.nodes() if node in read]


def is_depth_first(tree: GameTree, order: list[str]) -> bool:
    """Each node read is a child of a node on the current root-to-node path, in whatever child order."""
    if not order or order[0] != tree.root or len(set(order)) != len(order):
        return False
    path = [order[0]]
    for node in order[1:]:
        while path and path[-1] != tree.parent(node):
            path.pop()
        if not path:
            return False
        path.append(node)
    return True


@PROPERTIES
@given(game_trees())
def test_alphabeta_finds_the_minimax_value(tree):
    value = minimax(tree).value
    assert value == true_value(tree)
    assert alphabeta(tree).value == value
    assert alphabeta(tree, fail="hard").value == value


@PROPERTIES
@given(game_trees())
def test_alphabeta_reads_a_preorder_subset_and_prunes_the_rest(tree):
    soft, hard, full = alphabeta(tree).trace, alphabeta(tree, fail="hard").trace, minimax(tree).trace
    assert is_preorder_subsequence(tree, soft.order)
    assert hard.order == soft.order
    assert set(soft.order).isdisjoint(soft.pruned) and set(soft.order) | soft.pruned == set(tree.nodes())
    assert soft.order == [node for node in tree.nodes() if node in set(soft.expanded) | set(soft.opened)]
    assert set(soft.opened) <= set(full.opened) and len(soft.opened) <= len(full.opened)
    assert all(tree.parent(node) not in soft.pruned for node in soft.pruned_roots)
    assert {n for root in soft.pruned_roots for n in tree.subtree(root)} == soft.pruned


def bound_spec_holds(result, v, alpha, beta) -> bool:
    if alpha <= v <= beta:
        return result == v
    if v < alpha:
        return result <= alpha
    return result >= beta


# (alpha, beta) as offsets from the node's true value: around, touching, above and below it.
WINDOW_OFFSETS = [
    (-inf, inf), (-1, 1), (-0.5, 0.5), (0, 1), (-1, 0), (0, inf), (-inf, 0),
    (0.5, 1), (1, 3), (1, inf), (-1, -0.5), (-3, -1), (-inf, -1),
]  # fmt: skip


@PROPERTIES
@given(game_trees(max_depth=3))
def test_bound_specification_at_every_internal_node(tree):
    for node in tree.internal_nodes():
        v = true_value(tree, node)
        for low, high in WINDOW_OFFSETS:
            alpha, beta = v + low, v + high
            for fail in ("soft", "hard"):
                result = alphabeta(tree, node, alpha, beta, tree.is_max(node), fail=fail).value
                assert bound_spec_holds(result, v, alpha, beta), (node, v, alpha, beta, fail, result)
                if fail == "hard":
                    assert alpha <= result <= beta


@PROPERTIES
@given(game_trees())
def test_buggy_searches_return_full_traces(tree):
    for name, search in BUGGY_SEARCHES.items():
        result = search(tree)
        trace = result.trace
        assert isinstance(result, SearchResult)
        assert is_depth_first(tree, trace.order), name
        if name != "reversed_children":
            assert is_preorder_subsequence(tree, trace.order), name
        assert set(trace.order).isdisjoint(trace.pruned) and set(trace.order) | trace.pruned == set(tree.nodes())
        assert result.nodes == len(trace.expanded) + len(trace.opened)
    # wasteful or reordered, still right (a late cut-off's extra child never counts: its value
    # is dropped, or is beyond the bound that cut)
    for name in ("no_pruning", "strict_cutoff", "reversed_children", "window_not_passed", "late_cutoff"):
        assert BUGGY_SEARCHES[name](tree).value == true_value(tree), name
