"""Visits the children last to first."""

import math

HINT = "Visit the children in the order graph lists them, first to last."

graph = {}
terminal_nodes = {}


def alphabeta(node, alpha, beta, max_player):
    if node in terminal_nodes:
        return terminal_nodes[node]
    best = -math.inf if max_player else math.inf
    for child in reversed(graph[node]):
        value = alphabeta(child, alpha, beta, not max_player)
        if max_player:
            best = max(best, value)
            alpha = max(alpha, best)
        else:
            best = min(best, value)
            beta = min(beta, best)
        if alpha >= beta:
            break
    return best
