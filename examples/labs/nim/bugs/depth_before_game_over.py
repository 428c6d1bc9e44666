"""Tests the depth before the end of the game: a game that is over at depth 0 gets the
heuristic instead of its true value."""

import math

from nim import evaluate, is_over, successors, utility

HINT = "Test whether the game is over before testing the depth: a finished game is worth its utility even at depth 0."


def alphabeta(heaps, depth, alpha, beta, maximizing):
    if depth == 0:
        return evaluate(heaps, maximizing)
    if is_over(heaps):
        return utility(heaps, maximizing)
    best = -math.inf if maximizing else math.inf
    for child in successors(heaps):
        value = alphabeta(child, depth - 1, alpha, beta, not maximizing)
        if maximizing:
            best = max(best, value)
            alpha = max(alpha, best)
        else:
            best = min(best, value)
            beta = min(beta, best)
        if alpha >= beta:
            break
    return best
