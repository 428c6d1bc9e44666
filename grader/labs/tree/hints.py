"""What the tree lab says about a failure, and the classic-bug replays behind its diagnoses."""

from __future__ import annotations

from collections.abc import Hashable
from functools import lru_cache

from reference.trees import GameTree

from ...checks.show import is_number
from .cases import ReadsCall

READS = "distinct nodes read (expanded or opened)"


NO_READS_HINT = (
    "Your function read no node through graph[node] or terminal_nodes[leaf]: "
    "it must look the tree up in those two globals at each call, not in a copy, and not answer from "
    "results remembered from an earlier call (functools.lru_cache or a dict of results keeps another tree's answers), "
    "and not in another process (multiprocessing, a ProcessPoolExecutor: the grader sees the reads of the process "
    "it called; threads are fine)."
)


def replayed_bugs(
    tree: GameTree,
    call: list,
    reads: list[str],
    returned: object,
    by_value: bool = True,
    cutoff: str = ">=",
    among: frozenset[str] | None = None,
) -> frozenset[str]:
    """Classic bugs whose `call` reads what the student read (and, `by_value`, returns what they
    returned). Reading nothing and returning the example's value is the hard-coded answer;
    across cases (the pipeline keeps only bugs consistent with every case) that means: whatever
    the tree. `among`: only these bugs are replayed and named (bug_ways)."""
    from reference.tree_bugs import HARDCODED_ANSWER  # only for a failed check

    if not reads:
        hardcoded = is_number(returned) and returned == HARDCODED_ANSWER.value
        named = frozenset({HARDCODED_ANSWER.name} if hardcoded else ())
        return named if among is None else named & among
    seen = tuple(reads)
    by_value = by_value and is_number(returned)
    if among is not None:
        return frozenset(
            name
            for name in among
            if any(
                order == seen and (not by_value or value == returned)
                for order, value in bug_ways(tree, call, name, cutoff)
            )
        )
    if not by_value:  # the reads alone: one look-up (bug_readers)
        return bug_readers(tree, call, cutoff).get(seen, _NO_BUGS)
    return frozenset(
        name
        for name, ways in bug_replays(tree, call, cutoff).items()
        if any(order == seen and value == returned for order, value in ways)
    )


_NO_BUGS: frozenset[str] = frozenset()


# (tree, call) pairs, about 1.5 KB each: a failing tree submission's grading replays about 500
# (its cases' calls and the smaller trees its counterexamples are shrunk on), most of them
# the same as the other failing submissions' (a run's cases are the same for every student);
# with 256 kept, every grading pushed out what the next one needed
REPLAYS_KEPT = 2048


Replays = dict[str, tuple[tuple[tuple[str, ...], object], ...]]


def bug_replays(tree: GameTree, call: list, cutoff: str = ">=") -> Replays:
    """name -> (the nodes read, the value returned) of `call` written with each classic bug, in
    each common way of writing it (most bugs have one).
    A pure function of the tree, the call and the cutoff, so it is remembered: a batch's
    grader process grades every submission on the same cases, and replaying every bug for
    every call of each failing submission took about 55 ms of a grader process's CPU for such a
    submission (of 115-170 ms) with nine bugs, about 1.5 times that with thirteen (the 488
    calls of seed 1's cases: 53 against 80 ms, under load), and the window bugs' fail-hard
    forms and finite sentinel (s34: 22 replays a call, not 15) about 1.55 times that (62
    against 97 ms of CPU for those calls, interleaved, load 19). Bounded (REPLAYS_KEPT), so a
    batch's memory does not grow with the class."""
    key = tuple(call)
    if not all(isinstance(part, Hashable) for part in key):
        return _replays(tree, key, cutoff)
    try:
        return _remembered_replays(tree, key, cutoff)
    except TypeError:  # a part that says it is hashable and isn't
        return _replays(tree, key, cutoff)


def _replays(tree: GameTree, call: tuple, cutoff: str) -> Replays:
    from reference.tree_bugs import buggy_calls  # replayed only for a failed check

    return {
        name: tuple((tuple(result.trace.order), result.value) for result in replay(tree, *call))
        for name, replay in buggy_calls(cutoff).items()
    }


_remembered_replays = lru_cache(maxsize=REPLAYS_KEPT)(_replays)


def bug_ways(tree: GameTree, call: list, name: str, cutoff: str = ">=") -> tuple[tuple[tuple[str, ...], object], ...]:
    """(the nodes read, the value returned) of `call` written with the one classic bug
    `name`, in each of its ways (none for a name that is no bug of this cut-off): what
    replayed_bugs asks when only a few bugs are left to rule out. Remembered as
    bug_replays is, one entry per bug asked about (a failing submission's bounds case
    asks about the few bugs its other cases named, on each of its ~100 calls)."""
    key = tuple(call)
    if not all(isinstance(part, Hashable) for part in key):
        return _ways(tree, key, name, cutoff)
    try:
        return _remembered_ways(tree, key, name, cutoff)
    except TypeError:  # a part that says it is hashable and isn't
        return _ways(tree, key, name, cutoff)


def _ways(tree: GameTree, call: tuple, name: str, cutoff: str) -> tuple[tuple[tuple[str, ...], object], ...]:
    from reference.tree_bugs import buggy_calls  # replayed only for a failed check

    replay = buggy_calls(cutoff).get(name)
    return () if replay is None else tuple((tuple(result.trace.order), result.value) for result in replay(tree, *call))


# one entry per (call, bug) asked: a class's failing files ask about 5,600 on seed 1's
# bounds calls (the full replays of those calls are no longer kept: about the same memory)
_remembered_ways = lru_cache(maxsize=4 * REPLAYS_KEPT)(_ways)


Readers = dict[tuple[str, ...], frozenset[str]]


def bug_readers(tree: GameTree, call: list, cutoff: str = ">=") -> Readers:
    """The nodes read -> the classic bugs one of whose ways reads exactly those (bug_replays
    turned around). Remembered as bug_replays is: a failing submission's graded cases ask
    about 360 calls whose replays are all remembered, and going through every bug's ways for
    each was about 12 ms of a grader process's CPU per failing tree file (under load 13);
    a look-up in this is one hash of the reads."""
    key = tuple(call)
    if not all(isinstance(part, Hashable) for part in key):
        return _readers(bug_replays(tree, call, cutoff))
    try:
        return _remembered_readers(tree, key, cutoff)
    except TypeError:  # a part that says it is hashable and isn't
        return _readers(bug_replays(tree, call, cutoff))


def _readers(replays: Replays) -> Readers:
    readers: dict[tuple[str, ...], set[str]] = {}
    for name, ways in replays.items():
        for order, _ in ways:
            readers.setdefault(order, set()).add(name)
    return {order: frozenset(names) for order, names in readers.items()}


@lru_cache(maxsize=REPLAYS_KEPT)
def _remembered_readers(tree: GameTree, key: tuple, cutoff: str) -> Readers:
    return _readers(_remembered_replays(tree, key, cutoff))


def bugs_behind_calls(
    tree: GameTree,
    calls: list[list],
    observed: list[ReadsCall],
    cutoff: str = ">=",
    among: frozenset[str] | None = None,
) -> frozenset[str] | None:
    """Classic bugs consistent with the reads of every direct call that did not raise. Values
    are not compared: on a narrowed window an accepted fail-hard search returns other values
    than the fail-soft replays, but under `alpha >= beta` it reads the same nodes (under a
    strict cut-off it may read more: a fail-hard bug then goes unnamed more often). `among`:
    only these bugs are considered (Judgement.narrowed): the same answer & among."""
    consistent: frozenset[str] | None = None
    for call, seen in zip(calls, observed):
        if seen.get("error"):
            continue
        reads = [r for r in seen.get("reads", []) if isinstance(r, str)]
        bugs = replayed_bugs(tree, call, reads, seen.get("returned"), by_value=False, cutoff=cutoff, among=among)
        consistent = bugs if consistent is None else consistent & bugs
        if not consistent:
            break  # nothing left to rule out
    return consistent
