"""The `connect4` lab (seed 001): depth-limited alpha-beta with a memo cache of '=', '≤',
'≥' flags, move ordering and progressive deepening on Connect Four (DESIGN.md).

The observer ships `reference/games/connect4.py` into the student process, sets the game
globals and a fresh `gCache` before each measured call, and reports returned values,
`next_states` counts, the cache afterwards and the top-level `evaluate` calls of
`pd_evaluate`. This package plans those calls and judges them against
`reference.connect4_search`: values against the depth-limited value, every cache entry
against the value of its (State, limit), counts against every accepted variant's (the
course's heapq ordering, `sorted` with a key, fail-hard results, ordering by the previous
round, fail-soft from -inf), deepening against the stop rules on a virtual clock replayed from the counts
(clock.py), moves against the optimal set, end-game positions against Pons' solver.
"""

from .adapter import Connect4Lab

__all__ = ["Connect4Lab"]
