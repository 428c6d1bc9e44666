"""Hands each child the window the wrong way round, (beta, alpha), and cuts off on the value
(AIMA's `if v >= beta: return v`): where a child is handed alpha > beta this reads on where
the test on the bounds stops."""

import math

HINT = "Hand the window on in order: alphabeta(child, alpha, beta, not max_player), not (child, beta, alpha, ...)."

graph = {}
terminal_nodes = {}


def alphabeta(node, alpha, beta, max_player):
    if node in terminal_nodes:
        return terminal_nodes[node]
    if max_player:
        best = -math.inf
        for child in graph[node]:
            best = max(best, alphabeta(child, beta, alpha, False))
            if best >= beta:
                return best
            alpha = max(alpha, best)
        return best
    best = math.inf
    for child in graph[node]:
        best = min(best, alphabeta(child, beta, alpha, True))
        if best <= alpha:
            return best
        beta = min(beta, best)
    return best
