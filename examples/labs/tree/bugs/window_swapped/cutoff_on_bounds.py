"""Hands each child the window the wrong way round, (beta, alpha), and cuts off on the bounds."""

import math

HINT = "Hand the window on in order: alphabeta(child, alpha, beta, not max_player), not (child, beta, alpha, ...)."

graph = {}
terminal_nodes = {}


def alphabeta(node, alpha, beta, max_player):
    if node in terminal_nodes:
        return terminal_nodes[node]
    best = -math.inf if max_player else math.inf
    for child in graph[node]:
        value = alphabeta(child, beta, alpha, not max_player)
        if max_player:
            best = max(best, value)
            alpha = max(alpha, best)
        else:
            best = min(best, value)
            beta = min(beta, best)
        if alpha >= beta:
            break
    return best
