"""Alpha-beta for a mouse and two cats (one MAX agent and two MIN agents in each ply).

`value(board, agent, depth, alpha, beta)` is the mouse's value of `board` with `agent` to
move and `depth` plies left: a finished board, or one at depth 0, is worth
`board.evaluate()`; the mouse (agent 0) maximises over `board.legal_moves(0)`, each cat
minimises; after cat 2 the next ply begins, one level deeper. Generate successors only
with `board.after(agent, move)`, in the order of legal_moves, and prune only on a strict
inequality (a value above beta at the mouse, below alpha at a cat): never on equality.
`choose_move(board, depth)` returns the mouse's best move.
"""

import math

from catmouse import AGENTS


def value(board, agent, depth, alpha, beta):
    ### BEGIN SOLUTION
    if board.is_over() or depth == 0:
        return board.evaluate()
    following = (agent + 1) % AGENTS
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
    ### END SOLUTION


def choose_move(board, depth):
    ### BEGIN SOLUTION
    chosen, best = None, -math.inf
    for move in board.legal_moves(0):
        score = value(board.after(0, move), 1, depth, best, math.inf)
        if chosen is None or score > best:
            chosen, best = move, score
    return chosen
    ### END SOLUTION
