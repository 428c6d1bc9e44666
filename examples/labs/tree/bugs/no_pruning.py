"""Never cuts off: every node is read."""

import math

HINT = "Your search never cuts off: stop looping over a node's children as soon as alpha >= beta."

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
    return best
