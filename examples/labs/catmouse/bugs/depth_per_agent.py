"""Spends a level of depth on every agent's move instead of on every ply."""

import math

from catmouse import AGENTS

HINT = "A ply is a move of every agent: lower the depth only after the last cat has moved, not after each agent."


def value(board, agent, depth, alpha, beta):
    if board.is_over() or depth == 0:
        return board.evaluate()
    following = (agent + 1) % AGENTS
    if agent == 0:
        best = -math.inf
        for move in board.legal_moves(agent):
            best = max(best, value(board.after(agent, move), following, depth - 1, alpha, beta))
            if best > beta:
                return best
            alpha = max(alpha, best)
        return best
    best = math.inf
    for move in board.legal_moves(agent):
        best = min(best, value(board.after(agent, move), following, depth - 1, alpha, beta))
        if best < alpha:
            return best
        beta = min(beta, best)
    return best
