"""Cuts off only when alpha > beta, so equal bounds read on."""

import math

HINT = "You cut off only when alpha > beta; cut as soon as alpha >= beta, so equal bounds stop the loop too."

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
            beta = min(beta, best)
        if alpha > beta:
            break
    return best
