# %% [markdown]
# # Connect Four: alpha-beta with memoization, move ordering and progressive deepening
#
# Connect Four is too big to search to the end from the start, so the search
# stops after `limit` half-moves and guesses the value of the positions it
# reaches there with a `heuristic`. Three ideas make it fast enough to play:
#
# - **memoization**: `evaluate` keeps what it has found in the cache `gCache`,
#   keyed by `(State, limit)`. Alpha-beta often finds only a bound, so each
#   entry carries a flag: `('=', v)` the value is `v`; `('≤', v)` the value is
#   at most `v` (the search failed low: `v <= alpha`); `('≥', v)` the value is
#   at least `v` (it failed high: `v >= beta`);
# - **move ordering**: `maxValue` tries the successors with the highest cached
#   value first, `minValue` those with the lowest (a heap of
#   `(priority, state)` pairs, as in the course), so cut-offs come early;
# - **progressive deepening**: `pd_evaluate` searches to depth 0, 1, 2, ... on
#   one cache until the value is decided (-1 or 1) or the time is up.
#
# ## The game
#
# The grader sets these globals after running your code and before each call
# (anything you define under these names is replaced; the cell at the end
# defines them so that you can try your code):
#
# - `gPlayers = ['X', 'O']`: `'X'` moves first and maximises, `'O'` minimises;
# - `gStart`: the empty board; `gTestState`: a position to try things on;
# - `next_states(State, player)`: the boards `player` reaches with one stone,
#   one per column that is not full, from column 1 (left) to 7;
# - `finished(State)`: four in a line, or a full board;
# - `utility(State)`: for a finished board, 1 if 'X' has won, -1 if 'O' has,
#   0 for a draw;
# - `heuristic(State)`: a guess strictly between -1 and 1 for 'X' (open lines
#   of two and three stones, for 'X' minus for 'O').
#
# A state is a tuple of 6 rows (row 0 at the bottom), each a tuple of 7 cells
# `'X'`, `'O'` or `' '`. States are hashable and ordered, so they can be keys
# of `gCache` and the second item of heap entries.
#
# ## What the grader checks
#
# - **value**: `evaluate(State, limit, f)` returns the depth-limited minimax
#   value (`utility` at a finished state, `heuristic` at limit 0, a state with
#   a single successor passes it the same `limit`);
# - **bounds**: `maxValue` / `minValue` with narrow windows meet the bound
#   specification (inside the window: the value; below it: at most alpha;
#   above it: at least beta);
# - **cache**: after each call, every entry of `gCache` holds for its
#   `(State, limit)`;
# - **nodes**: how often your search calls `next_states`, with an empty and a
#   warm cache, against the course's search (`heapq`, `sorted` with a key and
#   fail-hard results are all accepted);
# - **deepening**: `pd_evaluate` calls `evaluate` at limits 0, 1, 2, ... and
#   stops after the first decided value or the first search that ends after
#   `time_limit` seconds, returning `(value, limit)` of that last search;
# - **choice**: `best_move` returns an optimal move at the depth reached;
# - **solved**: end-game positions from Pascal Pons' test set, solved by
#   `pd_evaluate` with a generous time limit.
#
# `gCache` is reset to `{}` before each measured call.

# %%
import heapq
import random
import time

gCache = {}


def store_cache(State, limit, alpha, beta, value):
    """Store `value`, found by a search of `State` to `limit` on the window
    (alpha, beta), under the key (State, limit) with its flag."""
    ### BEGIN SOLUTION
    global gCache
    if value <= alpha:
        gCache[(State, limit)] = ("≤", value)
    elif value < beta:
        gCache[(State, limit)] = ("=", value)
    else:  # value >= beta
        gCache[(State, limit)] = ("≥", value)
    ### END SOLUTION


def value_cache(State, limit):
    """The cached value of `State` at `limit`, whatever its flag; 0 if there is none."""
    ### BEGIN SOLUTION
    flag, value = gCache.get((State, limit), ("=", 0))
    return value
    ### END SOLUTION


def evaluate(State, limit, f, alpha=-1, beta=1):
    """The value of `State` searched to `limit` by `f` (maxValue when 'X' is to
    move, else minValue), through the cache."""
    ### BEGIN SOLUTION
    if (State, limit) in gCache:
        flag, v = gCache[(State, limit)]
        if flag == "=":
            return v
        if flag == "≤":
            if v <= alpha:
                return v
            elif alpha < v < beta:
                w = f(State, limit, alpha, v)
                store_cache(State, limit, alpha, v, w)
                return w
            else:  # beta <= v
                w = f(State, limit, alpha, beta)
                store_cache(State, limit, alpha, beta, w)
                return w
        if flag == "≥":
            if beta <= v:
                return v
            elif alpha < v < beta:
                w = f(State, limit, v, beta)
                store_cache(State, limit, v, beta, w)
                return w
            else:  # v <= alpha
                w = f(State, limit, alpha, beta)
                store_cache(State, limit, alpha, beta, w)
                return w
    v = f(State, limit, alpha, beta)
    store_cache(State, limit, alpha, beta, v)
    return v
    ### END SOLUTION


def maxValue(State, limit, alpha=-1, beta=1):
    """Alpha-beta for 'X' (gPlayers[0]), to `limit` half-moves."""
    ### BEGIN SOLUTION
    if finished(State):
        return utility(State)
    if limit == 0:
        return heuristic(State)
    value = alpha
    NextStates = next_states(State, gPlayers[0])
    if len(NextStates) == 1:  # the singular-move extension
        return evaluate(NextStates[0], limit, minValue, value, beta)
    Moves = []  # a priority queue: the highest cached value first
    for ns in NextStates:
        heapq.heappush(Moves, (-value_cache(ns, limit - 1), ns))
    while Moves != []:
        _, ns = heapq.heappop(Moves)
        value = max(value, evaluate(ns, limit - 1, minValue, value, beta))
        if value >= beta:
            return value
    return value
    ### END SOLUTION


def minValue(State, limit, alpha=-1, beta=1):
    """Alpha-beta for 'O' (gPlayers[1]), to `limit` half-moves."""
    ### BEGIN SOLUTION
    if finished(State):
        return utility(State)
    if limit == 0:
        return heuristic(State)
    value = beta
    NextStates = next_states(State, gPlayers[1])
    if len(NextStates) == 1:
        return evaluate(NextStates[0], limit, maxValue, alpha, value)
    Moves = []  # a priority queue: the lowest cached value first
    for ns in NextStates:
        heapq.heappush(Moves, (value_cache(ns, limit - 1), ns))
    while Moves != []:
        _, ns = heapq.heappop(Moves)
        value = min(value, evaluate(ns, limit - 1, maxValue, alpha, value))
        if value <= alpha:
            return value
    return value
    ### END SOLUTION


def pd_evaluate(State, time_limit, f):
    """Progressive deepening: evaluate `State` at limits 0, 1, 2, ... until the
    value is -1 or 1 or the time is up -> (value, limit) of the last search."""
    ### BEGIN SOLUTION
    start = time.time()
    limit = 0
    while True:
        value = evaluate(State, limit, f)
        stop = time.time()
        if value in [-1, 1] or stop - start > time_limit:
            return value, limit
        limit += 1
    ### END SOLUTION


def best_move(State, time_limit):
    """For 'X' to move: (value, state) with an optimal successor `state` at the
    depth that pd_evaluate reached (any optimal one, chosen at random)."""
    ### BEGIN SOLUTION
    NextStates = next_states(State, gPlayers[0])
    bestValue, limit = pd_evaluate(State, time_limit, maxValue)
    BestMoves = [s for s in NextStates if evaluate(s, max(limit - 1, 0), minValue) == bestValue]
    BestState = random.choice(BestMoves)
    return bestValue, BestState
    ### END SOLUTION


# %% [markdown]
# ## Optional: the game, to try your code
#
# The grader brings its own definitions of these names; this cell lets you
# run your functions on your own, e.g. `pd_evaluate(gTestState, 5, maxValue)`
# (X to move wins: the value is 1) after `gCache = {}`.

# %%
gPlayers = ["X", "O"]
gStart = tuple(tuple(" " for col in range(7)) for row in range(6))


def _lines():
    lines = []
    for drow, dcol in ((0, 1), (1, 0), (1, 1), (1, -1)):
        for row in range(6):
            for col in range(7):
                if 0 <= row + 3 * drow < 6 and 0 <= col + 3 * dcol < 7:
                    lines.append([(row + k * drow, col + k * dcol) for k in range(4)])
    return lines


_LINES = _lines()


def _winner(State):
    for line in _LINES:
        marks = {State[r][c] for r, c in line}
        if len(marks) == 1 and " " not in marks:
            return marks.pop()
    return None


def next_states(State, player):
    result = []
    for col in range(7):
        for row in range(6):
            if State[row][col] == " ":
                line = State[row][:col] + (player,) + State[row][col + 1 :]
                result.append(State[:row] + (line,) + State[row + 1 :])
                break
    return result


def finished(State):
    return _winner(State) is not None or " " not in State[5]


def utility(State):
    mark = _winner(State)
    if mark is not None:
        return 1 if mark == "X" else -1
    return 0 if " " not in State[5] else None


def heuristic(State):
    score = 0
    for line in _LINES:
        marks = [State[r][c] for r, c in line]
        if "O" not in marks:
            score += (0, 0, 1, 4, 0)[marks.count("X")]
        elif "X" not in marks:
            score -= (0, 0, 1, 4, 0)[marks.count("O")]
    return score / (abs(score) + 20)


def _from_rows(*rows_top_down):
    rows = [tuple(r.replace(".", " ")) for r in reversed(rows_top_down)]
    return tuple(rows + [tuple(" " * 7)] * (6 - len(rows)))


gTestState = _from_rows(
    ".......",
    ".......",
    ".......",
    ".......",
    ".......",
    ".......",
)
