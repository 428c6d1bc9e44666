# %% [markdown]
# # Alpha-beta pruning in negamax form
#
# In this lab you write a small *game solver*. It works for any deterministic
# game of two players who take turns, see the whole position, and whose
# results add up to zero (one's win is the other's loss). Given a position,
# it finds the result both players reach when they play perfectly, and it
# picks a move that achieves it.
#
# ## The game interface
#
# Your code never knows which game it is solving. It talks to the game only
# through these globals, which the grader sets in your module after running
# it and before calling any of your functions (anything you define under the
# same names is replaced):
#
# - `Players`: the list `[0, 1]`. Player `0` makes the first move.
# - `Start`: the position the game starts in.
# - `next_states(state, player)`: the list of positions `player` can reach
#   with one move from `state`, in a fixed order. Search them in this order.
# - `finished(state)`: `True` when the game is over in `state`.
# - `utility(state, player)`: for a finished `state`, `1` if `player` has
#   won, `-1` if `player` has lost and `0` for a draw.
#
# Treat states as opaque values: pass them around and compare them with
# `==`, but don't look inside. The grader runs your code on tic-tac-toe, on
# Nim and on small explicit game trees.
#
# ## Negamax
#
# Because the game is zero-sum, the value of a position for one player is
# minus its value for the other. So a single function is enough: the value of
# `state` for `player` is the largest of the numbers `-v`, where `v` is the
# value of a successor for the opponent. The helper `other(p)` returns the
# opponent of `p`.
#
# ## Alpha-beta and its bound specification
#
# `alphaBeta(State, player, alpha, beta)` doesn't have to return the exact
# value `v` of `State` for `player`. It only has to be exact when `v` lies in
# the window `[alpha, beta]`; outside it, a bound on the right side is enough.
# This is the specification of Knuth and Moore:
#
# - if `alpha <= v <= beta`, the result is `v`;
# - if `v < alpha`, the result is `<= alpha`;
# - if `v > beta`, the result is `>= beta`.
#
# That freedom is what allows pruning: once a move is found that is worth at
# least `beta`, the remaining moves can't change the answer the caller needs,
# so they are skipped. Every value in these games is -1, 0 or 1, so the window
# `[-1, 1]` always yields the exact value.
#
# ## What to write
#
# 1. `value(State, player, alpha=-1, beta=1)` adds 1 to the global counter
#    `num_value_call` and returns `alphaBeta(State, player, alpha, beta)`.
# 2. `alphaBeta(State, player, alpha, beta)`: for a finished state, return its
#    utility. Otherwise go through `next_states(State, player)` in order. A
#    successor's value is minus its value for the opponent, computed by
#    calling `value` (not `alphaBeta`, so that every visited position is
#    counted) with the window negated and swapped: `-beta, -alpha`. Keep the
#    best result so far, starting from `alpha`; return it as soon as it is
#    `>= beta`; otherwise raise `alpha` to it before the next successor.
# 3. `best_move(State, player)` returns a pair `(v, next_state)`: the value
#    `v` of `State` for `player`, and the first successor in
#    `next_states(State, player)` order that an optimal move reaches (a
#    successor whose value for the opponent is `-v`).
#
# ## What the grader checks
#
# The values your functions return, the bound specification on many states
# and windows, the move `best_move` picks, and `num_value_call`: it is reset
# to 0 before each measured call and read afterwards. From the start of
# tic-tac-toe, `value(Start, 0)` returns 0 after 16,811 calls of `value`; a
# search that prunes less, or in another order, makes a different number of
# calls.

# %%
def other(p):
    """The opponent of player `p`."""
    return Players[1] if p == Players[0] else Players[0]


num_value_call = 0


def alphaBeta(State, player, alpha, beta):
    """The value of `State` for `player`, within the bounds of the specification."""
    # TODO: your code here
    raise NotImplementedError


def value(State, player, alpha=-1, beta=1):
    """Count this call in `num_value_call`, then search with `alphaBeta`."""
    global num_value_call
    # count this call, then let alphaBeta do the search
    raise NotImplementedError


def best_move(State, player):
    """The value of `State` for `player` and the first successor an optimal move reaches."""
    # TODO: your code here
    raise NotImplementedError


# %% [markdown]
# ## Optional: a game to try your code on
#
# The grader brings its own games, so you don't need the next cell. To try
# your functions on your own, run it: it defines tic-tac-toe through the
# interface above. A state is a string of 9 characters, the board row by row:
# `'X'` for player 0, `'O'` for player 1, `'.'` for an empty cell. When you
# are graded, these definitions are replaced.

# %%
Players = [0, 1]
Start = "." * 9
_LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def _three_in_a_row(state):
    """'X' or 'O' if that mark fills a line, else None."""
    for a, b, c in _LINES:
        if state[a] != "." and state[a] == state[b] == state[c]:
            return state[a]
    return None


def next_states(state, player):
    mark = "XO"[player]
    return [state[:i] + mark + state[i + 1 :] for i in range(9) if state[i] == "."]


def finished(state):
    return _three_in_a_row(state) is not None or "." not in state


def utility(state, player):
    if not finished(state):
        return None
    mark = _three_in_a_row(state)
    return 0 if mark is None else (1 if mark == "XO"[player] else -1)


def try_tictactoe():
    """Solve tic-tac-toe from the start and show what your functions found."""
    global num_value_call
    num_value_call = 0
    print("value of Start for X:", value(Start, 0), "after", num_value_call, "calls of value")
    v, ns = best_move(Start, 0)
    print("best_move:", v, "\n" + "\n".join(ns[row : row + 3] for row in (0, 3, 6)))


# %% [markdown]
# Then call `try_tictactoe()` in a cell of your own. A correct solution
# prints the value 0 after 16,811 calls of `value`, and the first optimal
# move: 'X' in the top-left corner.
