# %% [markdown]
# # Alpha-beta pruning on an explicit game tree
#
# A game tree is written down as two dictionaries:
#
# - `graph` maps every inner node to the list of its children, in the order the
#   search must try them;
# - `terminal_nodes` maps every leaf to its value, seen from the MAX player.
#
# The root is a MAX node; below it MIN and MAX alternate level by level.
#
# Your job is `alphabeta(node, alpha, beta, max_player)`: it returns the minimax
# value of `node` while skipping every subtree that cannot change the answer.
# `alpha` is the best value MAX can already force on the way to `node`, `beta`
# the best value MIN can force. Once `alpha >= beta` at a node, its remaining
# children cannot matter: stop looking at them (that is a cut-off).
#
# How you will be graded (the grader replaces `graph` and `terminal_nodes` with
# its own trees before it calls your function):
#
# - **value**: `alphabeta(root, -inf, inf, True)` returns the root's value;
# - **nodes** and **pruned**: the grader watches which nodes your search reads
#   (`graph[node]` expands an inner node, `terminal_nodes[leaf]` opens a leaf) and
#   compares them, in order, with the reference search: children in listed order,
#   cut-off as soon as `alpha >= beta`. Checking `node in terminal_nodes` reads nothing;
# - **bounds**: your function is also called directly at inner nodes with narrow
#   windows. If the true value `v` lies inside `[alpha, beta]` you must return `v`;
#   if `v < alpha` any result `<= alpha` is fine, and if `v > beta` any result
#   `>= beta` (both "fail-soft" and "fail-hard" answers pass);
# - **random**: the same checks on trees you have not seen.
#
# Read the tree only through `graph` and `terminal_nodes` inside your function:
# a copy made outside it would be the wrong tree once the grader swaps them.

# %%
from math import inf

# The course's example tree. Its value is 4, and alpha-beta never reads
# d4, e7, e8 and e14.
graph = {
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

terminal_nodes = {
    "e0": -1,
    "e1": 2,
    "e2": 3,
    "e3": -5,
    "e4": 0,
    "e5": 4,
    "e6": 7,
    "e7": 2,
    "e8": 6,
    "e9": 9,
    "e10": 8,
    "e11": 1,
    "e12": 4,
    "e13": 0,
    "e14": 5,
}


# %%
def alphabeta(node, alpha, beta, max_player):
    """Value of `node`; MAX moves when `max_player` is true."""
    # TODO: your code here
    raise NotImplementedError


# %% [markdown]
# Try it on the example: the value should be 4.

# %%
print("value of a0:", alphabeta("a0", -inf, inf, True))
