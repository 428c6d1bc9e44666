"""Reference minimax and alpha-beta on a `GameTree`, recording every read so the grader can compare a student's.

One plain recursive search (`run_search`) does all the work; `SearchRules` says how it behaves.
The course's alpha-beta and minimax are two settings, and the classic student bugs in
`tree_bugs.py` are others, so every trace comes from the same code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import inf
from typing import Literal
from weakref import WeakKeyDictionary

from reference.trees import GameTree, Number


@dataclass
class SearchTrace:
    """What a search read, in order, and with which bounds (the seed prints the same facts)."""

    order: list[str] = field(default_factory=list)  # every node read, first read first (a preorder)
    expanded: list[str] = field(default_factory=list)  # internal nodes whose children were read
    opened: list[str] = field(default_factory=list)  # leaves whose value was read
    pruned: frozenset[str] = frozenset()  # nodes of the searched subtree never read
    pruned_roots: list[str] = field(default_factory=list)  # pruned nodes whose parent was read ("Pruning Node -> d4")
    alphas_betas: list[tuple[str, float, float]] = field(default_factory=list)  # (node, alpha, beta) after each child
    windows: dict[str, tuple[float, float]] = field(default_factory=dict)  # (alpha, beta) on entering each read node
    returned: dict[str, Number] = field(default_factory=dict)  # the value each read node returned


@dataclass
class SearchResult:
    """A search's value and what it read (its trace)."""

    value: Number
    trace: SearchTrace

    @property
    def nodes(self) -> int:
        """Distinct nodes read, the lab's `nodes` count."""
        return len(self.trace.order)


@dataclass(frozen=True)
class SearchRules:
    """How the search behaves; the defaults are the course's alpha-beta."""

    cutoff: Literal[">=", ">", "never"] = ">="  # stop looping over children once alpha (cutoff) beta
    raise_alpha: bool = True  # MAX nodes raise alpha to the best value so far
    lower_beta: bool = True  # MIN nodes lower beta to the best value so far
    reverse_children: bool = False  # visit children last to first
    alternate: bool = True  # children play the other role
    fail: Literal["soft", "hard"] = "soft"  # soft: return the best value found; hard: clamp it to the window
    # The settings below are only ever on in a classic bug's replay (reference/tree_bugs.py).
    child_window: Literal["passed", "swapped", "full"] = "passed"  # each child's window: (alpha, beta),
    # (beta, alpha), or (-full_window, full_window) whatever the node's bounds
    full_window: float = inf  # the "full" window's bound: infinity, or a sentinel such as 1000
    late_cutoff: bool = False  # test the cut-off on the bounds before the child just read: one child late
    swap_updates: bool = False  # MAX nodes lower beta and MIN nodes raise alpha
    # "bounds": cut once alpha (cutoff) beta; "value" (AIMA's `if v >= beta: return v`): a MAX node
    # once its value (cutoff) beta, a MIN node once alpha (cutoff) its value. The same unless a
    # node is entered with alpha >= beta, which only a bug's window does.
    cut_test: Literal["bounds", "value"] = "bounds"
    # what a fail-hard search (`fail="hard"`) returns, in the common ways of writing one (the
    # settings other than "clamp" are only ever on in a bug's replay). In a correct search
    # they return the same, except "own_bound" past a cut (its bound there is the value, as
    # fail-soft returns); they part where a bug's window or bound updates leave alpha >= beta
    # on entry or a bound the node never moves, so a fail-hard bug reads and returns otherwise:
    # "clamp": min(max(best, entry alpha), entry beta) after the loop;
    # "clamp_low_last": max(min(best, entry beta), entry alpha), the clamp the other way round;
    # "own_bound": MAX returns its alpha, MIN its beta (`alpha = max(alpha, child)` ... `return alpha`);
    # "textbook": at a cut MAX returns its beta and MIN its alpha, else MAX its alpha and MIN its
    # beta (`if v >= beta: return beta` ... `return alpha`)
    hard_returns: Literal["clamp", "clamp_low_last", "own_bound", "textbook"] = "clamp"

    def cuts(self, alpha: float, beta: float) -> bool:
        if self.cutoff == ">=":
            return alpha >= beta
        if self.cutoff == ">":
            return alpha > beta
        return False


COURSE_RULES = SearchRules()
# Bounds that never move can't cut, so this is plain minimax with a trace in the same shape.
MINIMAX_RULES = SearchRules(cutoff="never", raise_alpha=False, lower_beta=False)


def minimax(tree: GameTree, node: str | None = None, max_player: bool | None = None) -> SearchResult:
    """Minimax value of `node` (default: the root), reading the whole subtree; MAX at even depth unless told."""
    node = tree.root if node is None else node
    max_player = tree.is_max(node) if max_player is None else max_player
    return run_search(tree, node, -inf, inf, max_player, MINIMAX_RULES)


def alphabeta(
    tree: GameTree,
    node: str | None = None,
    alpha: float = -inf,
    beta: float = inf,
    max_player: bool | None = None,
    *,
    fail: Literal["soft", "hard"] = "soft",
    cutoff: Literal[">=", ">"] = ">=",
) -> SearchResult:
    """The course's alpha-beta: children in listed order, cut as soon as alpha >= beta
    (`cutoff=">"`: a course that prunes only when alpha > beta, never on equality)."""
    if fail not in ("soft", "hard"):
        raise ValueError(f"fail must be 'soft' or 'hard', not {fail!r}")
    if cutoff not in (">=", ">"):
        raise ValueError(f"cutoff must be '>=' or '>', not {cutoff!r}")
    node = tree.root if node is None else node
    max_player = tree.is_max(node) if max_player is None else max_player
    return run_search(tree, node, alpha, beta, max_player, SearchRules(fail=fail, cutoff=cutoff))


def run_search(
    tree: GameTree, node: str, alpha: float, beta: float, max_player: bool, rules: SearchRules
) -> SearchResult:
    """Search `node` with the window (alpha, beta) under `rules`, and trace it."""
    trace = SearchTrace()
    value = _search(tree, node, alpha, beta, max_player, rules, trace)
    read = set(trace.order)
    trace.pruned = frozenset(n for n in tree.subtree(node) if n not in read)
    trace.pruned_roots = [n for n in tree.subtree(node) if n in trace.pruned and tree.parent(n) in read]
    return SearchResult(value, trace)


def _search(
    tree: GameTree,
    node: str,
    alpha: float,
    beta: float,
    max_player: bool,
    rules: SearchRules,
    trace: SearchTrace,
) -> Number:
    trace.order.append(node)
    trace.windows[node] = (alpha, beta)
    if tree.is_leaf(node):
        trace.opened.append(node)
        trace.returned[node] = tree.values[node]
        return tree.values[node]

    trace.expanded.append(node)
    entry_alpha, entry_beta = alpha, beta
    children = tree.children[node][::-1] if rules.reverse_children else tree.children[node]
    child_is_max = not max_player if rules.alternate else max_player
    best = -inf if max_player else inf
    raises_alpha = max_player != rules.swap_updates
    # a bug's replay only: the course's search takes none of these branches
    passes_window, late, on_bounds = rules.child_window == "passed", rules.late_cutoff, rules.cut_test == "bounds"
    cut = False
    for child in children:
        if passes_window:
            value = _search(tree, child, alpha, beta, child_is_max, rules, trace)
        else:
            value = _search(tree, child, *_child_window(rules, alpha, beta), child_is_max, rules, trace)
        if late and _cuts(rules, max_player, alpha, beta, best):
            cut = True
            break  # the bounds of the children before this one would have cut before reading it
        best = max(best, value) if max_player else min(best, value)
        if raises_alpha:
            if rules.raise_alpha:
                alpha = max(alpha, best)
        elif rules.lower_beta:
            beta = min(beta, best)
        trace.alphas_betas.append((node, alpha, beta))
        if not late and (rules.cuts(alpha, beta) if on_bounds else _cuts(rules, max_player, alpha, beta, best)):
            cut = True
            break
    if rules.fail == "hard":
        best = _hard_value(rules, max_player, best, (entry_alpha, entry_beta), (alpha, beta), cut)
    trace.returned[node] = best
    return best


def _hard_value(
    rules: SearchRules,
    max_player: bool,
    best: Number,
    entry: tuple[float, float],
    bounds: tuple[float, float],
    cut: bool,
) -> Number:
    """What a fail-hard node returns, written as `rules.hard_returns` says (the same on a
    window with alpha < beta that the node's own updates keep so)."""
    (entry_alpha, entry_beta), (alpha, beta) = entry, bounds
    if rules.hard_returns == "clamp":
        return min(max(best, entry_alpha), entry_beta)
    if rules.hard_returns == "clamp_low_last":
        return max(min(best, entry_beta), entry_alpha)
    own, other = (alpha, beta) if max_player else (beta, alpha)
    if rules.hard_returns == "own_bound":
        return own
    return other if cut else own


def _cuts(rules: SearchRules, max_player: bool, alpha: float, beta: float, best: Number) -> bool:
    """Whether a node stops reading its children, as `rules.cut_test` says."""
    if rules.cut_test == "bounds":
        return rules.cuts(alpha, beta)
    return rules.cuts(best, beta) if max_player else rules.cuts(alpha, best)


def _child_window(rules: SearchRules, alpha: float, beta: float) -> tuple[float, float]:
    """The window a node hands to each child (a bug's replay may hand another than its own)."""
    if rules.child_window == "passed":
        return alpha, beta
    if rules.child_window == "swapped":
        return beta, alpha
    return -rules.full_window, rules.full_window


_TRUE_VALUES: WeakKeyDictionary[GameTree, dict[str, Number]] = WeakKeyDictionary()


def true_value(tree: GameTree, node: str | None = None) -> Number:
    """Minimax value of `node` (default: the root) in its role by depth (MAX at even depth); cached per tree."""
    table = _TRUE_VALUES.get(tree)
    if table is None:
        table = _TRUE_VALUES[tree] = _minimax_values(tree)
    return table[tree.root if node is None else node]


def _minimax_values(tree: GameTree) -> dict[str, Number]:
    values: dict[str, Number] = dict(tree.values)
    for node in reversed(tree.internal_nodes()):  # children come after their parent in preorder
        pick = max if tree.is_max(node) else min
        values[node] = pick(values[child] for child in tree.children[node])
    return values
