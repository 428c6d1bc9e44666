"""After cat 1 comes the mouse again: cat 2 never moves."""

import math

HINT = "Every agent moves in turn, the mouse then cat 1 then cat 2: use (agent + 1) % AGENTS for the next agent."


def value(board, agent, depth, alpha, beta):
    if board.is_over() or depth == 0:
        return board.evaluate()
    following = (agent + 1) % 2
    deeper = depth - 1 if following == 0 else depth
    if agent == 0:
        best = -math.inf
        for move in board.legal_moves(agent):
            best = max(best, value(board.after(agent, move), following, deeper, alpha, beta))
            if best > beta:
                return best
            alpha = max(alpha, best)
        return best
    best = math.inf
    for move in board.legal_moves(agent):
        best = min(best, value(board.after(agent, move), following, deeper, alpha, beta))
        if best < alpha:
            return best
        beta = min(beta, best)
    return best
