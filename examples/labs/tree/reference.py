"""Alpha-beta pruning on an explicit game tree.

`graph` maps each inner node to its children, in the order to search them, and
`terminal_nodes` each leaf to its value; the grader sets both before every call. The
root is a MAX node and levels alternate. Complete `alphabeta` so that
`alphabeta(root, -math.inf, math.inf, True)` returns the root's minimax value and reads
(looks up in graph or terminal_nodes) only the nodes alpha-beta cannot prune.
"""

import math

graph = {}  # node -> children, in search order
terminal_nodes = {}  # leaf -> value


def alphabeta(node, alpha, beta, max_player):
    """The value of `node` searched with the window (alpha, beta); MAX moves when `max_player`."""
    ### BEGIN SOLUTION
    if node in terminal_nodes:
        return terminal_nodes[node]
    best = -math.inf if max_player else math.inf
    for child in graph[node]:
        value = alphabeta(child, alpha, beta, not max_player)
        if max_player:
            best = max(best, value)
            alpha = max(alpha, best)
        else:
            best = min(best, value)
            beta = min(beta, best)
        if alpha >= beta:  # the rest can't change the result
            break
    return best
    ### END SOLUTION
