"""A MAX node never raises alpha."""

import math

HINT = "At a MAX node, raise alpha to the best value found so far after each child (alpha = max(alpha, value))."

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
        else:
            best = min(best, value)
            beta = min(beta, best)
        if alpha >= beta:
            break
    return best
