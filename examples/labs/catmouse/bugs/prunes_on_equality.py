"""Prunes on equality too (>= beta, <= alpha)."""

import math

from catmouse import AGENTS

HINT = "Prune only on a strict inequality (value > beta at the mouse, value < alpha at a cat), never on equality."


def value(board, agent, depth, alpha, beta):
    if board.is_over() or depth == 0:
        return board.evaluate()
    following = (agent + 1) % AGENTS
    deeper = depth - 1 if following == 0 else depth
    if agent == 0:
        best = -math.inf
        for move in board.legal_moves(agent):
            best = max(best, value(board.after(agent, move), following, deeper, alpha, beta))
            if best >= beta:
                return best
            alpha = max(alpha, best)
        return best
    best = math.inf
    for move in board.legal_moves(agent):
        best = min(best, value(board.after(agent, move), following, deeper, alpha, beta))
        if best <= alpha:
            return best
        beta = min(beta, best)
    return best
