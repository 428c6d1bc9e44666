"""The tree lab's classic-bug replays are remembered per (tree, call, cutoff) and are the
same as replaying afresh (grader/labs/tree/hints.py, bug_replays)."""

import random
from math import inf

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.checks.show import is_number
from grader.labs.tree import hints
from reference.random_trees import random_tree
from reference.tree_bugs import buggy_calls
from reference.trees import GameTree

TREE = GameTree.from_mapping({"A": ["B", "C"], "B": ["D", "E"], "C": ["F", "G"]}, {"D": 3, "E": 5, "F": 2, "G": 9})


def test_a_remembered_replay_is_the_fresh_one_and_is_reused():
    call = ["A", -inf, inf, True]
    before = hints._remembered_replays.cache_info()
    first = hints.bug_replays(TREE, call, ">=")
    again = hints.bug_replays(GameTree.from_mapping(*TREE.to_mapping()), list(call), ">=")  # an equal tree
    after = hints._remembered_replays.cache_info()
    assert again is first and after.hits == before.hits + 1
    fresh = {name: replay(TREE, *call) for name, replay in buggy_calls(">=").items()}
    assert first == {name: tuple((tuple(r.trace.order), r.value) for r in ways) for name, ways in fresh.items()}
    # one replay per way of writing it: window_swapped's two cut-off tests and five fail-hard forms
    assert len(first["window_swapped"]) == 7 and len(first["no_pruning"]) == 1
    assert hints.bug_replays(TREE, call, ">") != first  # the cutoff is part of the key


def test_a_call_that_cannot_be_a_key_is_replayed_without_the_memo():
    before = hints._remembered_replays.cache_info()
    odd = ["A", -inf, inf, True, []]  # an unhashable part (never a real call's): not remembered
    try:
        hints.bug_replays(TREE, odd, ">=")
    except TypeError:
        pass  # the replay itself refuses five arguments; the memo was never asked
    assert hints._remembered_replays.cache_info().currsize == before.currsize


def _named_by_scanning(tree, call, reads, returned, by_value, cutoff):
    """replayed_bugs as it was before its look-up (bug_readers): every bug's every way compared."""
    seen = tuple(reads)
    return frozenset(
        name
        for name, ways in hints.bug_replays(tree, call, cutoff).items()
        if any(
            order == seen and (not by_value or not is_number(returned) or value == returned) for order, value in ways
        )
    )


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    cutoff=st.sampled_from([">=", ">"]),
    pick=st.integers(0, 50),
    alter=st.sampled_from(["as replayed", "one read dropped", "reversed", "none", "random"]),
    returned=st.one_of(st.none(), st.integers(-9, 9), st.floats(allow_nan=True), st.text(max_size=3)),
    by_value=st.booleans(),
)
def test_the_readers_look_up_names_the_bugs_the_scan_does(seed, cutoff, pick, alter, returned, by_value):
    """The same names whatever the reads: those of some bug's way (the look-up's hits), changed
    ones, none, random ones; with and without the value compared, numbers or not."""
    tree = random_tree(seed)
    nodes = tree.nodes()
    window = [[-inf, inf], [-3, 3], [0, 0], [2, -2]][pick % 4]
    call = [nodes[0], *window, True]
    ways = [way for replays in hints.bug_replays(tree, call, cutoff).values() for way in replays]
    order, value = ways[pick % len(ways)]
    reads = {
        "as replayed": list(order),
        "one read dropped": list(order[:-1]),
        "reversed": list(reversed(order)),
        "none": [],
        "random": random.Random(seed).sample(nodes, min(len(nodes), pick % 7)),
    }[alter]
    if alter == "as replayed" and pick % 2:
        returned = value  # the replay's own value, so that by value it names the bug
    assert hints.replayed_bugs(tree, call, reads, returned, by_value, cutoff) == _named_by_scanning(
        tree, call, reads, returned, by_value, cutoff
    )
