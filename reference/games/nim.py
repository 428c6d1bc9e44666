"""Normal-play Nim behind the negamax game interface.

Self-contained (standard library only): the grader ships this file's source
text into the student's process, where its functions become the globals the
student's `value` / `alphaBeta` / `best_move` call.

A move takes 1 or more objects from one heap; the player who takes the last
object wins (so the player to move when all heaps are empty has lost).

A state is a pair `(heaps, to_move)`: `heaps` is a tuple of heap sizes in
their original order (not sorted, so that "heap i" means the same heap all
game long) and `to_move` is the player who moves next. The player to move is
part of the state because empty heaps alone can't tell who took the last
object. Theory: a state is lost for the player to move iff the XOR of the
heap sizes is 0.
"""

Players = [0, 1]
Start = ((1, 2, 3), 0)


def configure(heaps=(1, 2, 3)):
    """Start a new game on `heaps` (a sequence of non-negative sizes), player 0 to move."""
    global Start
    Start = (_checked_heaps(heaps), Players[0])


def _checked_heaps(heaps):
    if not (isinstance(heaps, (list, tuple)) and heaps and all(type(size) is int and size >= 0 for size in heaps)):
        raise ValueError(f"heaps must be a non-empty sequence of non-negative ints, not {heaps!r}")
    return tuple(heaps)


def next_states(state, player):
    """`player` takes `count` objects from heap `i`, for i in heap order and
    count = 1, 2, ... up to the heap's size; then the other player is to move."""
    heaps, _ = state
    opponent = Players[1] if player == Players[0] else Players[0]
    return [
        (heaps[:i] + (size - count,) + heaps[i + 1 :], opponent)
        for i, size in enumerate(heaps)
        for count in range(1, size + 1)
    ]


def finished(state):
    """All heaps are empty."""
    heaps, _ = state
    return not any(heaps)


def utility(state, player):
    """-1 for the player to move on empty heaps (the other took the last
    object), 1 for the other player; None while objects are left."""
    if not finished(state):
        return None
    _, to_move = state
    return -1 if player == to_move else 1


def describe(state):
    """e.g. 'heaps 1 0 3, player 1 to move'."""
    heaps, to_move = state
    return f"heaps {' '.join(map(str, heaps))}, player {to_move} to move"


def encode(state):
    """The state as JSON data: [list of heap sizes, player to move]."""
    heaps, to_move = state
    return [list(_checked_heaps(heaps)), _checked_player(to_move)]


def decode(obj):
    """The state that `encode` turned into `obj`."""
    if not (isinstance(obj, list) and len(obj) == 2):
        raise ValueError(f"not an encoded Nim state: {obj!r}")
    heaps, to_move = obj
    return (_checked_heaps(heaps), _checked_player(to_move))


def _checked_player(player):
    if player not in Players or type(player) is not int:
        raise ValueError(f"not a player: {player!r}")
    return player
