"""A MIN node never lowers beta."""

import math

HINT = "At a MIN node, lower beta to the best value found so far after each child (beta = min(beta, value))."

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
            alpha = max(alpha, best)
        else:
            best = min(best, value)
        if alpha >= beta:
            break
    return best
