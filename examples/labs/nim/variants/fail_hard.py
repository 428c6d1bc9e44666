"""An accepted variant: fail-hard (every value clamped to the window it was searched in)."""

import math

from nim import evaluate, is_over, moves, play, successors, utility


def alphabeta(heaps, depth, alpha, beta, maximizing):
    if is_over(heaps):
        return min(max(utility(heaps, maximizing), alpha), beta)
    if depth == 0:
        return min(max(evaluate(heaps, maximizing), alpha), beta)
    for child in successors(heaps):
        value = alphabeta(child, depth - 1, alpha, beta, not maximizing)
        if maximizing:
            alpha = max(alpha, value)
        else:
            beta = min(beta, value)
        if alpha >= beta:
            break
    return alpha if maximizing else beta


def best_move(heaps, depth):
    best, chosen = -math.inf, None
    for move in moves(heaps):
        value = alphabeta(play(heaps, move), depth - 1, -math.inf, math.inf, False)
        if chosen is None or value > best:
            best, chosen = value, move
    return chosen
