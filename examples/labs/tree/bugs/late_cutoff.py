"""Tests the cut-off before the bound takes in the child just read: one child late."""

import math

HINT = "Test for the cut-off as soon as the bound has taken in the child just read, not after reading the next child."

graph = {}
terminal_nodes = {}


def alphabeta(node, alpha, beta, max_player):
    if node in terminal_nodes:
        return terminal_nodes[node]
    best = -math.inf if max_player else math.inf
    for child in graph[node]:
        value = alphabeta(child, alpha, beta, not max_player)
        if alpha >= beta:
            break
        if max_player:
            best = max(best, value)
            alpha = max(alpha, best)
        else:
            best = min(best, value)
            beta = min(beta, best)
    return best
