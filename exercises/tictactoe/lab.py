# %% [markdown]
# # Lab: alpha-beta pruning for tic-tac-toe
#
# The computer plays tic-tac-toe by searching the game tree: from the current
# board it tries every move, every answer to it, and so on until games end,
# assuming both sides play their best. That is minimax. Alpha-beta pruning
# gets the same answer while skipping moves that cannot change it: once a
# move is known to be worse than one found earlier, the rest of its answers
# need not be examined.
#
# You complete four functions: `game_over`, `maximize`, `minimize` and
# `minimax`. The helpers before them are given; you may keep them as they are.
#
# ## How a board is stored
#
# A board is a 3x3 numpy array, e.g. `np.zeros((3, 3))` for the empty board.
# A cell holds `1` for 'o', `-1` for 'x' and `0` when it is empty. A player is
# named by its number too: `1` is 'o' and `-1` is 'x'.
#
# ## How a finished game is scored
#
# `score(matrix, player, depth)` scores a finished board for `player`, where
# `depth` is the number of moves made since the search started:
# `10 - depth` if `player` has three in a row, `depth - 10` if the opponent
# has, and `0` for a draw. So a win is worth more the sooner it comes, and a
# loss costs less the later it comes.

# %%
import numpy as np

# %% [markdown]
# ## Given helpers


# %%
def get_next_turn(active_turn):
    # The other player: 1 ('o') <-> -1 ('x')
    if active_turn == 1:
        next_turn = -1
    else:
        next_turn = 1
    return next_turn


def get_childs(matrix, turn):
    # Every board that player `turn` can reach in one move, as copies,
    # trying the empty cells row by row, left to right.
    N = 3
    childs = []
    for i in range(N):
        for j in range(N):
            if matrix[i, j] == 0:
                child = matrix.copy()
                child[i, j] = turn
                childs.append(child)
    return childs


def game_status(matrix):
    # 1 if 'o' has three in a row, -1 if 'x' has, 0 otherwise
    lines = [
        matrix[0, :],
        matrix[1, :],
        matrix[2, :],
        matrix[:, 0],
        matrix[:, 1],
        matrix[:, 2],
        matrix.diagonal(),
        np.fliplr(matrix).diagonal(),
    ]
    for line in lines:
        if line.sum() == 3:
            return 1
    for line in lines:
        if line.sum() == -3:
            return -1
    return 0


def score(matrix, player, depth):
    # The value of a finished board for `player`, `depth` moves into the search
    status = game_status(matrix)
    if status == player:
        return 10 - depth
    if status == -player:
        return depth - 10
    return 0


# %% [markdown]
# ## Exercise 1: `game_over`
#
# Return `(game_finished, status)`: the game is finished when someone has
# three in a row or when no cell is empty; `status` is `game_status(matrix)`.


# %%
def game_over(matrix):
    # status: 1 if 'o' won, -1 if 'x' won, 0 otherwise
    # game_finished: True if the game is over
    game_finished = False
    status = game_status(matrix)
    if status != 0:
        # Someone won: the game is over
        #Write code here
        pass
    if abs(matrix).sum() == 9:
        # No empty cell left: the game is over
        #Write code here
        pass
    return game_finished, status


# %% [markdown]
# ## Exercises 2 and 3: `maximize` and `minimize`
#
# `maximize` is called when `player` (the one the computer plays for) is to
# move: it looks for the child with the highest utility. `minimize` is called
# when the opponent is to move and looks for the lowest. Each calls the other
# on the children, one move deeper.
#
# - A finished board returns `(None, score(matrix, player, depth), nodes_visited)`.
# - `nodes_visited` grows by one for every child, just before it is searched.
# - `choice` changes only when a child is strictly better than the best so far.
# - `alpha` is the best utility the maximizer is already sure of on the way to
#   this board, `beta` the best for the minimizer. When the best utility found
#   here reaches the other side's bound (`maxUtility >= beta`, or
#   `minUtility <= alpha`), the remaining children can't matter: stop.
#   Otherwise raise `alpha` (lower `beta`) if this utility improves it.
#
# Complete the lines marked "complete".


# %%
def maximize(matrix, active_turn, player, depth, alpha, beta, nodes_visited):
    game_finished, _ = game_over(matrix)
    if game_finished:
        return None, score(matrix, player, depth), nodes_visited
    depth += 1

    infinite_number = 100000
    maxUtility = -infinite_number
    choice = None

    childs = get_childs(matrix, active_turn)
    for child in childs:
        nodes_visited = nodes_visited + 1
        _, utility, nodes_visited = minimize(
            child, get_next_turn(active_turn), player, depth, alpha, beta, nodes_visited
        )

        if utility > maxUtility:
            choice = child
            maxUtility = None  # complete: store the child's utility, the best found so far

        if maxUtility >= beta:
            break
        if maxUtility > alpha:
            alpha = None  # complete: raise alpha to maxUtility, the maximizer's new bound
    return choice, maxUtility, nodes_visited


def minimize(matrix, active_turn, player, depth, alpha, beta, nodes_visited):
    game_finished, _ = game_over(matrix)
    if game_finished:
        return None, score(matrix, player, depth), nodes_visited
    depth += 1

    infinite_number = 100000
    minUtility = infinite_number
    choice = None

    childs = get_childs(matrix, active_turn)
    for child in childs:
        nodes_visited = nodes_visited + 1
        _, utility, nodes_visited = maximize(
            child, get_next_turn(active_turn), player, depth, alpha, beta, nodes_visited
        )

        if utility < minUtility:
            choice = child
            minUtility = None  # complete: store the child's utility, the lowest found so far

        if minUtility <= alpha:
            break
        if minUtility < beta:
            beta = None  # complete: lower beta to minUtility, the minimizer's new bound
    return choice, minUtility, nodes_visited


# %% [markdown]
# ## Exercise 4: `minimax`
#
# Choose the move for `player` on `matrix`: call `maximize` with `player` to
# move, at depth 0, with the widest window (`alpha = -infinite_number`,
# `beta = infinite_number`, where `infinite_number = 100000`) and no node
# visited yet, and return what it returns: `(choice, score, nodes_visited)`.
# (Inside `minimax`, the name `score` is the result, not the helper.)
#
# From the empty board with `player = 1` you should get a score of `0`,
# `20865` nodes visited, and 'o' in the top-left corner.


# %%
def minimax(matrix, player):
    #initialize infinite number here
    #initialize alpha
    #initialize beta
    #call maximize, which returns choice, score and nodes visited
    return choice, score, nodes_visited


# %% [markdown]
# ## What the grader checks
#
# - `game_over` on won boards (rows, columns, diagonals, for both players),
#   drawn full boards and unfinished ones.
# - The `score` that `minimax` returns, and `nodes_visited`: it must match the
#   count of the search described above exactly, so keep the order of the
#   children and the exact cut-off tests.
# - Which boards your search expands, in order: the grader watches the calls
#   of `get_childs`, so keep calling it in `maximize` and `minimize`.
# - `maximize` and `minimize` called directly on positions in the middle of a
#   game with narrow windows: the result must be exact when the true value
#   lies within `[alpha, beta]`, at most `alpha` when it is below, and at
#   least `beta` when it is above.
# - The move `minimax` chooses: any move with the best value is accepted; a
#   slower win is not the best, because `score` rewards quick wins.
# - Hidden random positions, and time and memory limits.
#
# ## Play against your program
#
# Run `play()` in a cell (or in a terminal) to play against `minimax`. It is
# not run for you: the grader never answers `input()`.


# %%
def play(human=-1, human_starts=True):
    """Human vs computer in the terminal; `human` is 1 ('o') or -1 ('x')."""
    marks = {1: "o", -1: "x", 0: "."}

    def show(matrix):
        for row in matrix:
            print(" ".join(marks[int(cell)] for cell in row))

    matrix = np.zeros((3, 3))
    turn = human if human_starts else -human
    while not game_over(matrix)[0]:
        show(matrix)
        if turn == human:
            answer = input(f"Your move as '{marks[human]}' (row and column, 1-3, e.g. '2 3'): ")
            try:
                row, column = (int(part) - 1 for part in answer.split())
            except ValueError:
                print("Please type two numbers, e.g. 2 3")
                continue
            if not (0 <= row < 3 and 0 <= column < 3) or matrix[row, column] != 0:
                print("That cell is not free")
                continue
            matrix[row, column] = human
        else:
            matrix, points, nodes_visited = minimax(matrix, turn)
            print("computer: points", points, "nodes_visited", nodes_visited)
        turn = get_next_turn(turn)
    show(matrix)
    status = game_status(matrix)
    print("draw" if status == 0 else ("you win" if status == human else "computer wins"))
