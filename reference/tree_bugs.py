"""Classic student mistakes in the tree lab, as searches the grader can replay to explain a wrong expansion order.

If a submission's reads match one of these traces exactly, the grader can name the bug and show
its hint. The table `BUGS` is the data (name, setting, hint); the search itself is
`tree_search.run_search`, shared with the reference, except for a wrong starting value, which
`run_search` fixes at -inf/+inf and so gets a small search of its own here. A mistake that
hands a child a window with alpha >= beta (`window_swapped`) reads differently depending on
whether the cut-off tests the bounds or the value (AIMA's `if v >= beta: return v`): such a bug
lists the other way in `also`, and a submission matches the bug if it reads as either.

One mistake no search reproduces: an answer typed in for the course's example tree, returned
whatever the tree (`HARDCODED_ANSWER`); the grader recognises it from its reads (none) and its
answer. `DIAGNOSIS_HINTS` holds the hint of every diagnosis.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from math import inf
from typing import Any

from reference.tree_search import COURSE_RULES, SearchResult, SearchRules, SearchTrace, run_search
from reference.trees import GameTree, Number

SENTINEL = 1000  # the finite "infinity" students hand a child most often, besides 10**9 and sys.maxsize
COURSE_STARTS = (-inf, inf)  # a MAX node's best value starts at -inf, a MIN node's at +inf


@dataclass(frozen=True)
class Bug:
    name: str
    rules: SearchRules
    hint: str  # one line, addressed to the student
    swaps_roles: bool = False  # max_player=True minimises (and False maximises)
    starts: tuple[float, float] = COURSE_STARTS  # best value before the first child: (MAX, MIN)
    # other common ways of writing the same mistake that read differently (a bug that hands a
    # child a window with alpha >= beta: the cut-off tested on the bounds or on the value)
    also: tuple[SearchRules, ...] = ()


def fail_hard_forms(**bug: Any) -> tuple[SearchRules, ...]:
    """A window bug (`bug`: the SearchRules settings that make it) written in a fail-hard
    search, each common way: the value clamped into the entry window after the loop
    (`min(max(v, alpha0), beta0)`, or `max(alpha0, min(v, beta0))`: they part only on a
    window with alpha > beta); the textbook's `if v >= beta: return beta` ... `return alpha`
    (cut on the value, or on the bounds after `alpha = max(alpha, v)`); and `alpha =
    max(alpha, alphabeta(...))` ... `return alpha` (which returns the value past a cut).
    Under a swapped window each reads or returns otherwise than the others
    (tests/test_diagnoses.py judges each on every case)."""
    return (
        SearchRules(fail="hard", **bug),
        SearchRules(fail="hard", hard_returns="clamp_low_last", **bug),
        SearchRules(fail="hard", hard_returns="textbook", cut_test="value", **bug),
        SearchRules(fail="hard", hard_returns="textbook", **bug),
        SearchRules(fail="hard", hard_returns="own_bound", **bug),
    )


BUGS: tuple[Bug, ...] = (
    Bug(
        "no_pruning",
        SearchRules(cutoff="never"),
        "Your search never cuts off: stop looping over a node's children as soon as alpha >= beta.",
    ),
    Bug(
        "strict_cutoff",
        SearchRules(cutoff=">"),
        "You cut off only when alpha > beta; cut as soon as alpha >= beta, so equal bounds stop the loop too.",
    ),
    Bug(
        "alpha_never_updated",
        SearchRules(raise_alpha=False),
        "At a MAX node, raise alpha to the best value found so far after each child (alpha = max(alpha, value)).",
    ),
    Bug(
        "beta_never_updated",
        SearchRules(lower_beta=False),
        "At a MIN node, lower beta to the best value found so far after each child (beta = min(beta, value)).",
    ),
    Bug(
        "reversed_children",
        SearchRules(reverse_children=True),
        "Visit the children in the order graph lists them, first to last.",
    ),
    Bug(
        "no_alternation",
        SearchRules(alternate=False),
        "Pass the other player's role to the children: alphabeta(child, alpha, beta, not max_player).",
    ),
    Bug(
        "min_at_root",
        SearchRules(),
        "The root is a MAX node: max_player=True must maximise (the first call is alphabeta(root, -inf, inf, True)).",
        swaps_roles=True,
    ),
    Bug(
        "max_starts_at_zero",
        SearchRules(),
        "At a MAX node start v at -math.inf, not 0: when every child is negative, 0 wrongly wins.",
        starts=(0, inf),
    ),
    Bug(
        "min_starts_at_zero",
        SearchRules(),
        "At a MIN node start v at math.inf, not 0: when every child is positive, 0 wrongly wins.",
        starts=(-inf, 0),
    ),
    Bug(
        "window_swapped",
        SearchRules(child_window="swapped"),
        "Hand the window on in order: alphabeta(child, alpha, beta, not max_player), not (child, beta, alpha, ...).",
        also=(SearchRules(child_window="swapped", cut_test="value"), *fail_hard_forms(child_window="swapped")),
    ),
    Bug(
        "window_not_passed",
        SearchRules(child_window="full"),
        "Pass your current alpha and beta to each child, not a fresh window (-inf, inf): below a node, prune on its bounds too.",
        # a big finite sentinel reads as infinity wherever every value is within it (10**9,
        # sys.maxsize on the lab's cases); ±1000 doesn't hold the lab's huge values, so it
        # is replayed as written, fail-soft or clamped into that window
        also=(
            SearchRules(child_window="full", full_window=SENTINEL),
            SearchRules(child_window="full", full_window=SENTINEL, fail="hard"),
        ),
    ),
    Bug(
        "late_cutoff",
        SearchRules(late_cutoff=True),
        "Test for the cut-off as soon as the bound has taken in the child just read, not after reading the next child.",
    ),
    Bug(
        "bound_updates_swapped",
        SearchRules(swap_updates=True),
        "A MAX node raises alpha (alpha = max(alpha, v)) and a MIN node lowers beta (beta = min(beta, v)), not the reverse.",
        # fail-hard: the value clamped at the end (either way round reads alike here); the
        # textbook's forms return a bound the node never moves under this bug (MAX's alpha),
        # which no one writes on purpose, and are not replayed
        also=(SearchRules(swap_updates=True, fail="hard"),),
    ),
)


# A course that prunes only when alpha > beta (a spec's `conventions: {cutoff: strict}`) has the
# mirror of `strict_cutoff` as its classic bug: a cut-off on equal bounds too.
INCLUSIVE_CUTOFF = Bug(
    "inclusive_cutoff",
    SearchRules(cutoff=">="),
    "You cut off as soon as alpha >= beta; this course prunes only when alpha > beta, so equal bounds "
    "go on to the next child.",
)


def bugs_for(cutoff: str = ">=") -> tuple[Bug, ...]:
    """The classic bugs of a course that cuts off on `cutoff` (">=" the default, ">" strict):
    every other bug is made on that course's search, and the cut-off bug is its mirror."""
    if cutoff == ">=":
        return BUGS
    if cutoff != ">":
        raise ValueError(f"cutoff must be '>=' or '>', not {cutoff!r}")
    return tuple(
        INCLUSIVE_CUTOFF
        if bug.name == "strict_cutoff"
        else replace(bug, rules=_strict(bug.rules), also=tuple(_strict(rules) for rules in bug.also))
        for bug in BUGS
    )


def _strict(rules: SearchRules) -> SearchRules:
    """`rules` on a course that cuts off only when alpha > beta (a search that never cuts stays so)."""
    return replace(rules, cutoff=">") if rules.cutoff == ">=" else rules


def buggy_calls(
    cutoff: str = ">=",
) -> dict[str, Callable[[GameTree, str, float, float, bool], tuple[SearchResult, ...]]]:
    """name -> the call `alphabeta(node, alpha, beta, max_player)` written with that bug in each
    of its common ways (the first: `call_with_bug`'s), for a course that cuts off on `cutoff`."""
    return {bug.name: partial(calls_with_bug, bug) for bug in bugs_for(cutoff)}


def calls_with_bug(
    bug: Bug, tree: GameTree, node: str, alpha: float, beta: float, max_player: bool
) -> tuple[SearchResult, ...]:
    """What `alphabeta(node, alpha, beta, max_player)` written with `bug` reads and returns, in
    each of the bug's common ways (`Bug.also`)."""
    first = call_with_bug(bug, tree, node, alpha, beta, max_player)
    role = not max_player if bug.swaps_roles else max_player
    return (first, *(run_search(tree, node, alpha, beta, role, rules) for rules in bug.also))


def call_with_bug(bug: Bug, tree: GameTree, node: str, alpha: float, beta: float, max_player: bool) -> SearchResult:
    """What `alphabeta(node, alpha, beta, max_player)` written with `bug` reads and returns."""
    role = not max_player if bug.swaps_roles else max_player
    if bug.starts != COURSE_STARTS:
        return _search_from_starts(tree, node, alpha, beta, role, bug.starts, bug.rules)
    return run_search(tree, node, alpha, beta, role, bug.rules)


def _search_with_bug(bug: Bug, tree: GameTree) -> SearchResult:
    """Search the whole tree as the root call `alphabeta(root, -inf, inf, True)` would, but with `bug`."""
    return call_with_bug(bug, tree, tree.root, -inf, inf, True)


def _search_from_starts(
    tree: GameTree,
    node: str,
    alpha: float,
    beta: float,
    max_player: bool,
    starts: tuple[float, float],
    rules: SearchRules = COURSE_RULES,
) -> SearchResult:
    """The course's alpha-beta (cut-off as `rules` says), except that a MAX (MIN) node's best
    value starts at `starts[0]` (`starts[1]`): the bug `v = 0` instead of `v = -inf`."""
    trace = SearchTrace()

    def search(node: str, alpha: float, beta: float, max_player: bool) -> Number:
        trace.order.append(node)
        trace.windows[node] = (alpha, beta)
        if tree.is_leaf(node):
            trace.opened.append(node)
            best = tree.values[node]
        else:
            trace.expanded.append(node)
            best = starts[0] if max_player else starts[1]
            for child in tree.children[node]:
                value = search(child, alpha, beta, not max_player)
                if max_player:
                    best = max(best, value)
                    alpha = max(alpha, best)
                else:
                    best = min(best, value)
                    beta = min(beta, best)
                trace.alphas_betas.append((node, alpha, beta))
                if rules.cuts(alpha, beta):
                    break
        trace.returned[node] = best
        return best

    value = search(node, alpha, beta, max_player)
    read = set(trace.order)
    trace.pruned = frozenset(n for n in tree.subtree(node) if n not in read)
    trace.pruned_roots = [n for n in tree.subtree(node) if n in trace.pruned and tree.parent(n) in read]
    return SearchResult(value, trace)


@dataclass(frozen=True)
class AnswerBug:
    """A mistake seen in the answer rather than the reads: `value` returned for every tree,
    without reading it."""

    name: str
    value: Number
    hint: str


EXAMPLE_VALUE = 4  # the root value of the course's example tree (DESIGN.md)
HARDCODED_ANSWER = AnswerBug(
    "hardcoded_answer",
    EXAMPLE_VALUE,
    f"You return {EXAMPLE_VALUE}, the example's value, without reading the tree: compute the value from "
    "graph and terminal_nodes.",
)

BUGGY_CALLS: dict[str, Callable[[GameTree, str, float, float, bool], SearchResult]] = {
    bug.name: partial(call_with_bug, bug) for bug in BUGS
}
BUGGY_SEARCHES: dict[str, Callable[[GameTree], SearchResult]] = {
    bug.name: partial(_search_with_bug, bug) for bug in BUGS
}
BUG_HINTS: dict[str, str] = {bug.name: bug.hint for bug in BUGS}
DIAGNOSIS_HINTS: dict[str, str] = {**BUG_HINTS, HARDCODED_ANSWER.name: HARDCODED_ANSWER.hint}
# the diagnoses of a course with other conventions (a strict cut-off): the mirrored bugs
MIRRORED_HINTS: dict[str, str] = {INCLUSIVE_CUTOFF.name: INCLUSIVE_CUTOFF.hint}


def hints_for(cutoff: str = ">=") -> dict[str, str]:
    """Every diagnosis's hint in the words of a course that cuts off on `cutoff`: a strict
    course's hints say "alpha > beta" where they name the cut-off."""
    if cutoff == ">=":
        return dict(DIAGNOSIS_HINTS)
    return {
        bug.name: bug.hint.replace("alpha >= beta", "alpha > beta") if bug.name != INCLUSIVE_CUTOFF.name else bug.hint
        for bug in bugs_for(cutoff)
    } | {HARDCODED_ANSWER.name: HARDCODED_ANSWER.hint}
