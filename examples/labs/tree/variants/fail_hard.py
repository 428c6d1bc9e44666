"""An accepted variant: fail-hard alpha-beta (the result is clamped to the window)."""

import math

graph = {}
terminal_nodes = {}


def alphabeta(node, alpha, beta, max_player):
    if node in terminal_nodes:
        return min(max(terminal_nodes[node], alpha), beta)
    best = -math.inf if max_player else math.inf
    for child in graph[node]:
        value = alphabeta(child, alpha, beta, not max_player)
        if max_player:
            best = max(best, value)
            alpha = max(alpha, best)
        else:
            best = min(best, value)
            beta = min(beta, best)
        if alpha >= beta:
            break
    return min(max(best, alpha), beta)
