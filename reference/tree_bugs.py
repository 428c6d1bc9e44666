"""Classic student mistakes in the tree lab, as searches the grader can replay to explain a wrong expansion order.

If a submission's reads match one of these traces exactly, the grader can name the bug and show
its hint. The table `BUGS` is the data (name, setting, hint); the search itself is
`tree_search.run_search`, shared with the reference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from math import inf

from reference.tree_search import SearchResult, SearchRules, run_search
from reference.trees import GameTree


@dataclass(frozen=True)
class Bug:
    name: str
    rules: SearchRules
    hint: str  # one line, addressed to the student
    root_is_max: bool = True


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
        root_is_max=False,
    ),
)


def _search_with_bug(bug: Bug, tree: GameTree) -> SearchResult:
    """Search the whole tree as the root call `alphabeta(root, -inf, inf, True)` would, but with `bug`."""
    return run_search(tree, tree.root, -inf, inf, bug.root_is_max, bug.rules)


BUGGY_SEARCHES: dict[str, Callable[[GameTree], SearchResult]] = {
    bug.name: partial(_search_with_bug, bug) for bug in BUGS
}
BUG_HINTS: dict[str, str] = {bug.name: bug.hint for bug in BUGS}
