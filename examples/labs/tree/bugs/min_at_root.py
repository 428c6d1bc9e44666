"""max_player=True minimises: the roles are swapped."""

import math

HINT = "The root is a MAX node: max_player=True must maximise (the first call is alphabeta(root, -inf, inf, True))."

graph = {}
terminal_nodes = {}


def alphabeta(node, alpha, beta, max_player):
    if node in terminal_nodes:
        return terminal_nodes[node]
    best = math.inf if max_player else -math.inf
    for child in graph[node]:
        value = alphabeta(child, alpha, beta, not max_player)
        if not max_player:
            best = max(best, value)
            alpha = max(alpha, best)
        else:
            best = min(best, value)
            beta = min(beta, best)
        if alpha >= beta:
            break
    return best
