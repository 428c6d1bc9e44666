"""A MAX node lowers beta and a MIN node raises alpha."""

import math

HINT = (
    "A MAX node raises alpha (alpha = max(alpha, v)) and a MIN node lowers beta (beta = min(beta, v)), not the reverse."
)

graph = {}
terminal_nodes = {}


def alphabeta(node, alpha, beta, max_player):
    if node in terminal_nodes:
        return terminal_nodes[node]
    best = -math.inf if max_player else math.inf
    for child in graph[node]:
        value = alphabeta(child, alpha, beta, not max_player)
        if max_player:
            best = max(best, value)
            beta = min(beta, best)
        else:
            best = min(best, value)
            alpha = max(alpha, best)
        if alpha >= beta:
            break
    return best
