"""The `negamax` lab: `value` / `alphaBeta` / `best_move` on a game interface (DESIGN.md).

The observer builds the case's game in the student process (the game module's source is
shipped with the probe), sets the game globals, and reports what each call returned, the
student's `num_value_call` afterwards and the states `next_states` was called on. This
package plans those calls and judges them against `reference.negamax`.

Counts are compared exactly with the course's search. The accepted variants (fail-hard,
`val` starting from -1 or -inf instead of alpha) visit exactly the same states for every
window with alpha < beta, and only such windows are measured: `value(state, player)` with
its default window (-1, 1), or a window around [-1, 1]. With alpha == beta they may differ,
so those windows appear only in the `bounds` check, which judges results, not counts.
"""

from .adapter import NegamaxLab

__all__ = ["NegamaxLab"]
