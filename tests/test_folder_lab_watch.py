"""The watch a lab folder's game gets (grader/labs/generic/watch.py), the same in the
student's process and around the reference: what counts as a read, how states become
labels, and what is put back before every call. Plain objects, no process."""

from __future__ import annotations

import json
import types

from grader.labs.generic.watch import LABEL_CHARS, READ_LIMIT, Watch

GAME = """
WATCH = {"graph": "state", "expand": "state", "Node.child": "result"}
GLOBALS = ("graph",)
MODULE = "toy"
graph = {}


def setup(graph):
    globals()["graph"] = {node: list(children) for node, children in graph.items()}


def expand(state):
    return [state + 1, state + 2]


class Node:
    def __init__(self, n):
        self.n = n

    def child(self, step):
        return Node(self.n + step)


def encode(state):
    return state.n if isinstance(state, Node) else state
"""


def toy(**changes: object) -> types.ModuleType:
    module = types.ModuleType("toy")
    exec(GAME, module.__dict__)  # noqa: S102 - a test's own game
    module.__dict__.update(changes)
    return module


def measured(watch: Watch, call) -> dict:  # noqa: ANN001 - any callable
    watch.start()
    try:
        call()
    finally:
        return watch.stop()  # noqa: B012 - the record even if the call raised


def test_a_mapping_read_is_a_key_found_by_index_or_get() -> None:
    watch = Watch(toy(), json.dumps)
    watch.begin({"graph": {"a": ["b", "c"], "b": []}})
    graph = watch.module.graph

    def search() -> None:
        assert "a" in graph and "z" not in graph  # membership: no read
        assert graph.get("z") is None  # an absent key: no read
        children = graph["a"]
        children.pop()  # a copy: the next read is whole
        assert graph.get("a") == ["b", "c"] and graph["b"] == []
        list(graph.items())  # iteration: no read

    assert measured(watch, search) == {"reads": ["a", "b"], "counts": {"graph": 3}, "truncated": False}


def test_repeats_and_results() -> None:
    watch = Watch(toy(REPEATS=True), json.dumps)
    watch.begin(None)
    game = watch.module
    record = measured(watch, lambda: [game.expand(1), game.expand(1), game.Node(5).child(2)])
    assert record["reads"] == ["1", "1", "7"] and record["counts"] == {"expand": 2, "Node.child": 1}
    distinct = Watch(toy(), json.dumps)
    distinct.begin(None)
    assert measured(distinct, lambda: [distinct.module.expand(1), distinct.module.expand(1)])["reads"] == ["1"]


def test_nothing_is_read_outside_a_measured_call() -> None:
    watch = Watch(toy(), json.dumps)
    watch.begin(None)
    watch.module.expand(3)
    assert measured(watch, lambda: None)["reads"] == []


def test_labels_are_short_and_keep_different_states_apart() -> None:
    watch = Watch(toy(), json.dumps)
    assert watch.label("a0") == "a0" and watch.label((1, [2, 3])) == "[1,[2,3]]"
    assert watch.label({"b": 1, "a": 2}) == '{"a":2,"b":1}'
    long_a, long_b = list(range(200)), list(range(199)) + [-1]
    assert len(watch.label(long_a)) == LABEL_CHARS and watch.label(long_a) != watch.label(long_b)
    assert watch.label(object()).startswith("<unencodable object")


def test_reads_are_bounded_but_counted() -> None:
    watch = Watch(toy(REPEATS=True), json.dumps)
    watch.begin(None)
    record = measured(watch, lambda: [watch.module.expand(i) for i in range(READ_LIMIT + 5)])
    assert len(record["reads"]) == READ_LIMIT and record["truncated"] and record["counts"]["expand"] == READ_LIMIT + 5


def test_begin_puts_the_game_back_as_shipped() -> None:
    watch = Watch(toy(), json.dumps)
    watch.begin(None)
    game = watch.module
    game.expand = lambda state: []  # tampered: an unwatched function
    game.Node.child = lambda self, step: self
    game.extra = "left behind"
    watch.begin(None)
    record = measured(watch, lambda: [game.expand(1), game.Node(1).child(1)])
    assert record["reads"] == ["1", "2"] and not hasattr(game, "extra")


def test_install_hands_the_game_to_the_callers_module() -> None:
    watch = Watch(toy(), json.dumps)
    stale = toy()  # another copy of the module (a notebook cell's import)
    namespace = {"graph": {"mine": []}, "toy": stale, "grow": stale.expand, "Node": stale.Node, "own": print}
    watch.begin({"graph": {"r": []}})
    watch.install(namespace)
    game = watch.module
    assert namespace["graph"] is game.graph and namespace["toy"] is game
    assert namespace["grow"] is game.expand and namespace["Node"] is game.Node and namespace["own"] is print
    assert measured(watch, lambda: namespace["grow"](4))["reads"] == ["4"]
