"""Depth-limited alpha-beta on take-away Nim.

Heaps of sticks; a move takes 1, 2 or 3 sticks from one heap; whoever takes the last
stick wins. Search `depth` moves ahead: a finished game is worth `utility`, a game cut
off at depth 0 is worth the heuristic `evaluate`. Visit the successors in the order the
game gives them, and cut off as soon as alpha >= beta. Expand a position with
`successors(heaps)`: the grader counts the positions your search reads through
`successors`, `utility` and `evaluate`, so children made with `moves` and `play` go unseen.
"""

import math

from nim import evaluate, is_over, moves, play, successors, utility


def alphabeta(heaps, depth, alpha, beta, maximizing):
    """The value for MAX of `heaps`, searched `depth` moves deep within (alpha, beta)."""
    ### BEGIN SOLUTION
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
        if alpha >= beta:
            break
    return best
    ### END SOLUTION


def best_move(heaps, depth):
    """MAX's best move as (heap index, sticks taken), judged `depth` moves deep."""
    ### BEGIN SOLUTION
    best, chosen = -math.inf, None
    for move in moves(heaps):
        value = alphabeta(play(heaps, move), depth - 1, best, math.inf, False)
        if chosen is None or value > best:
            best, chosen = value, move
    return chosen
    ### END SOLUTION
