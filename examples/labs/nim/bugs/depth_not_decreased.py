"""Passes the same depth down: the search never stops before the game ends."""

import math

from nim import evaluate, is_over, successors, utility

HINT = "Pass depth - 1 to the successors: each move spends one level of the depth limit."


def alphabeta(heaps, depth, alpha, beta, maximizing):
    if is_over(heaps):
        return utility(heaps, maximizing)
    if depth == 0:
        return evaluate(heaps, maximizing)
    best = -math.inf if maximizing else math.inf
    for child in successors(heaps):
        value = alphabeta(child, depth, alpha, beta, not maximizing)
        if maximizing:
            best = max(best, value)
            alpha = max(alpha, best)
        else:
            best = min(best, value)
            beta = min(beta, best)
        if alpha >= beta:
            break
    return best
