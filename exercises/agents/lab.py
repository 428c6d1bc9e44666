# %% [markdown]
# # Lab: alpha-beta agents for tic-tac-toe and Connect Four
#
# A minimax agent looks at every move, every answer to it, and so on, to find
# the move that is best against a perfect opponent. Alpha-beta pruning finds
# the same move while skipping branches that cannot change it. In this lab
# you add alpha-beta pruning to the agents of the previous chapter.
#
# ## The environments
#
# The games are environments in the style of OpenAI Gym, imported below:
#
# - `env = ttt()` is tic-tac-toe. Cells are numbered 1-9 row by row from the
#   top left; `env.turn` is `"X"` (moves first) or `"O"`; `env.state` is a
#   numpy vector of 9 numbers: 1 for X, -1 for O, 0 for an empty cell
#   (`env.state.reshape(3, 3)` shows the board).
# - `env = conn()` is Connect Four. Columns are numbered 1-7; `env.turn` is
#   `"red"` (moves first) or `"yellow"`; `env.state.T[::-1]` shows the board.
# - `env.validinputs` lists the legal moves in increasing order, and
#   `state, reward, done, info = env.step(move)` plays one for the player to
#   move: `reward` is 1 when the first player has just won, -1 when the second
#   has, 0 otherwise; `done` says whether the game is over.
# - Never play a hypothetical move on `env` itself: make a copy with
#   `deepcopy(env)` and step the copy.
#
# The grader gives your code its own instrumented copies of these
# environments: it counts every `step` call, on `env` and on all its copies,
# and compares the count with the chapter's algorithm. So try the moves in
# `env.validinputs` order, and stop exactly when the chapter stops.
#
# ## Payoffs, alpha and beta
#
# A payoff is 1 (a win), 0 (a tie) or -1 (a loss). `alpha` is the best payoff
# found so far for the first player (X, red) and `beta` the best for the second
# (O, yellow). Both start at -2, below every payoff (`None` means -2 too). Once
# `alpha >= -beta`, the player to move already has a line the opponent will
# never allow: stop searching the current position.

# %%
from copy import deepcopy
from random import choice

try:
    # what the chapter imports (the grader provides these modules)
    from utils.conn_env import conn  # noqa: F401 - for section 2
    from utils.ttt_simple_env import ttt
except ImportError:  # working on your own machine: abgrade's copy of the same environments
    from reference.envs import conn, ttt  # noqa: F401

# %% [markdown]
# ## 1. Tic-tac-toe
#
# `maximized_payoff_ttt(env, reward, done, alpha, beta)` returns the best
# payoff the player to move in `env` can reach; `reward` and `done` are what
# the previous move returned. If `done` is set, the game is already over: the
# player to move has lost when `reward` is not 0 (return -1), else it is a tie
# (return 0). Otherwise try every move on a copy; your payoff for a move is
# minus the opponent's best payoff after it. Start your best payoff at your
# own bound, and when a move beats it, raise your bound (`alpha` if you are
# X, `beta` if you are O). After each move, stop if `alpha >= -beta`.


# %%
def maximized_payoff_ttt(env, reward, done, alpha, beta):
    if done:
        if reward != 0:
            return -1
        return 0
    if alpha is None:
        alpha = -2
    if beta is None:
        beta = -2
    # TODO: your code here
    raise NotImplementedError


# %% [markdown]
# `minimax_ttt(env)` returns the agent's move. A move that wins at once is
# played at once. Otherwise rate every move with `maximized_payoff_ttt`
# (fresh bounds -2, -2 for each) and choose at random among the wins, else
# among the ties, else among the losses.


# %%
def minimax_ttt(env):
    wins, ties, losses = [], [], []
    for m in env.validinputs:
        env_copy = deepcopy(env)
        state, reward, done, info = env_copy.step(m)
        # TODO: your code here
        raise NotImplementedError
    if wins:
        return choice(wins)
    if ties:
        return choice(ties)
    return choice(losses)


# %% [markdown]
# ## 2. Connect Four
#
# Connect Four is too big to search to the end. `max_payoff_conn(env, reward,
# done, depth, alpha, beta)` works like `maximized_payoff_ttt` but looks only
# `depth` moves ahead: after the `done` test, a search with `depth == 0`
# returns 0 (counted as a tie), and each move is searched with `depth - 1`.
# `minimax_conn(env, depth=3)` rates each move with
# `max_payoff_conn(env_copy, reward, done, depth, -2, -2)`.


# %%
def max_payoff_conn(env, reward, done, depth, alpha, beta):
    if done:
        if reward != 0:
            return -1
        return 0
    # TODO: your code here
    raise NotImplementedError


# %%
def minimax_conn(env, depth=3):
    wins, ties, losses = [], [], []
    for m in env.validinputs:
        env_copy = deepcopy(env)
        state, reward, done, info = env_copy.step(m)
        # TODO: your code here
        raise NotImplementedError
    if wins:
        return choice(wins)
    if ties:
        return choice(ties)
    return choice(losses)


# %% [markdown]
# ## 3. Try it
#
# Your agent against itself: every game of tic-tac-toe between perfect
# players is a tie. `abgrade grade lab.py --lab agents` plays it against the
# reference's agents.

# %%
if __name__ == "__main__":
    env = ttt()
    env.reset()
    while not env.done:
        env.step(minimax_ttt(env))
    print(env.state.reshape(3, 3), "reward", env.reward)
