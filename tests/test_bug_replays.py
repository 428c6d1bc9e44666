"""The tree lab's classic-bug replays are remembered per (tree, call, cutoff) and are the
same as replaying afresh (grader/labs/tree/hints.py, bug_replays)."""

from math import inf

from grader.labs.tree import hints
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
