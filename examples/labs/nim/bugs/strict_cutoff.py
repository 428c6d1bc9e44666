"""Cuts off only when alpha > beta."""

import math

from nim import evaluate, is_over, successors, utility

HINT = "Cut off as soon as alpha >= beta: when the bounds are equal, no other successor can change the result."


def alphabeta(heaps, depth, alpha, beta, maximizing):
    if is_over(heaps):
        return utility(heaps, maximizing)
    if depth == 0:
        return evaluate(heaps, maximizing)
    best = -math.inf if maximizing else math.inf
    for child in successors(heaps):
        value = alphabeta(child, depth - 1, alpha, beta, not maximizing)
        if maximizing:
            best = max(best, value)
            alpha = max(alpha, best)
        else:
            best = min(best, value)
            beta = min(beta, best)
        if alpha > beta:
            break
    return best
