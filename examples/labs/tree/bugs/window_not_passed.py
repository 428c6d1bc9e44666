"""Searches every child on (-inf, inf) instead of the node's own window."""

import math

HINT = (
    "Pass your current alpha and beta to each child, not a fresh window (-inf, inf): "
    "below a node, prune on its bounds too."
)

graph = {}
terminal_nodes = {}


def alphabeta(node, alpha, beta, max_player):
    if node in terminal_nodes:
        return terminal_nodes[node]
    best = -math.inf if max_player else math.inf
    for child in graph[node]:
        value = alphabeta(child, -math.inf, math.inf, not max_player)
        if max_player:
            best = max(best, value)
            alpha = max(alpha, best)
        else:
            best = min(best, value)
            beta = min(beta, best)
        if alpha >= beta:
            break
    return best
