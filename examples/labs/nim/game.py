"""Take-away Nim with a depth limit: a few heaps of sticks; a move takes 1, 2 or 3 sticks
from one heap, and whoever takes the last stick wins.

The student's code imports the game (`from nim import successors, is_over, utility,
evaluate`) and searches `depth` moves ahead: a finished game has its true value (+1 when
MAX has won, -1 when MIN has), a game cut off at depth 0 the heuristic `evaluate`. The
grader watches `successors` (a state expanded), `utility` and `evaluate` (a state valued);
every call counts (REPEATS: the same heaps are reached along several lines).
"""

STUDENT_API = {
    "alphabeta": "alphabeta(heaps, depth, alpha, beta, maximizing)",
    "best_move": "best_move(heaps, depth)",
}
SEARCH = "alphabeta"
CHOOSE = "best_move"
STATE = "heaps"
WATCH = {"successors": "state", "utility": "state", "evaluate": "state"}
REPEATS = True
MODULE = "nim"

MAX_TAKE = 3


def moves(heaps):
    """Every move as (heap index, sticks taken), heap by heap, fewest sticks first."""
    return [(index, take) for index, size in enumerate(heaps) for take in range(1, min(MAX_TAKE, size) + 1)]


def play(heaps, move):
    index, take = move
    return heaps[:index] + (heaps[index] - take,) + heaps[index + 1 :]


def successors(heaps):
    """The heaps after each move, in the order of `moves`."""
    return [play(heaps, move) for move in moves(heaps)]


def is_over(heaps):
    return not any(heaps)


def utility(heaps, maximizing):
    """A finished game: the player to move has lost (+1 for MAX when that is MIN)."""
    if not is_over(heaps):
        raise ValueError(f"utility() of {heaps}: the game is not over")
    return -1 if maximizing else 1


def evaluate(heaps, maximizing):
    """A guess at a game cut off unfinished, for MAX, in (-1, 1): the player to move looks
    like winning when the sticks left are no multiple of four (right for one heap only)."""
    mover_looks_good = sum(heaps) % (MAX_TAKE + 1) != 0
    return 0.5 if mover_looks_good == maximizing else -0.5


# --- the grader's side: states as JSON lists, the move check, hidden cases ----------------


def encode(heaps):
    return list(heaps)


def decode(data):
    if not isinstance(data, list) or not all(type(size) is int and size >= 0 for size in data):
        raise ValueError(f"heaps are a list of sizes (whole numbers, 0 or more), not {data!r}")
    return tuple(data)


def after(call, move):
    """best_move's answer [heap index, sticks taken]: the search call after it, MIN to move."""
    heaps = call["heaps"]
    if not isinstance(move, list) or len(move) != 2 or tuple(move) not in moves(heaps):
        return None
    return {"heaps": play(heaps, tuple(move)), "depth": call["depth"] - 1, "maximizing": False}


def random_case(rng, heaps=(2, 3), size=(1, 5), depth=(2, 4)):
    """A hidden case: `heaps` heaps of `size` sticks each, searched `depth` moves deep
    (ranges), MAX to move."""
    piles = [rng.randint(*size) for _ in range(rng.randint(*heaps))]
    return {"call": {"heaps": piles, "depth": rng.randint(*depth), "maximizing": True}}


def smaller(case):
    """Cases smaller than a failed hidden one, biggest cut first: a heap gone, the search a
    move shallower, a heap with fewer sticks. The grader sends the first that still fails
    to the student's code, goes on from it, and shows the smallest it finds."""
    call = case["call"]
    heaps, depth = call["heaps"], call["depth"]
    if len(heaps) > 1:
        for index in range(len(heaps)):
            yield {"call": {**call, "heaps": heaps[:index] + heaps[index + 1 :]}}
    if depth > 1:
        yield {"call": {**call, "depth": depth - 1}}
    for index, size in enumerate(heaps):
        for fewer in dict.fromkeys((size // 2, size - 1)):
            if 0 < fewer < size:
                yield {"call": {**call, "heaps": heaps[:index] + (fewer,) + heaps[index + 1 :]}}
