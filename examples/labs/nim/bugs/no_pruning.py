"""Never cuts off."""

import math

from nim import evaluate, is_over, successors, utility

HINT = "Your search never cuts off: stop looping over the successors as soon as alpha >= beta."


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
    return best
