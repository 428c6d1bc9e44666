"""Seeded random game trees for the hidden cases and the property tests: uneven, with negative values and ties.

Nodes are named like the course's tree: one letter per depth ('a' for the root, then 'b', ...,
'z', 'aa', ...) and a running number per level, left to right ('c0', 'c1', 'c2', ...).
"""

from __future__ import annotations

import random
from typing import Literal, cast

from reference.trees import GameTree, Number

# Chance that a node between the minimum and maximum depth is a leaf; it makes the trees uneven.
LEAF_CHANCE = 0.5


def random_tree(
    seed: int | random.Random,
    *,
    branching: tuple[int, int] = (2, 3),
    depth: tuple[int, int] = (2, 4),
    values: Literal["int", "float"] = "int",
    value_range: tuple[Number, Number] = (-9, 9),
    tie_rate: float = 0.25,
) -> GameTree:
    """A reproducible random tree: same seed and arguments, same tree.

    `branching` and `depth` are inclusive ranges (children per internal node; depth of each leaf,
    the root having depth 0). With probability `tie_rate` a leaf copies the value of an earlier leaf
    sibling, so that ties (and alpha == beta cut-offs) occur. Float values have one decimal.
    """
    _check_arguments(branching, depth, values, value_range, tie_rate)
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    next_number: dict[int, int] = {}
    children: dict[str, tuple[str, ...]] = {}
    leaf_values: dict[str, Number] = {}

    def name(level: int) -> str:
        number = next_number.get(level, 0)
        next_number[level] = number + 1
        return f"{level_letters(level)}{number}"

    def is_leaf(level: int) -> bool:
        return level >= depth[1] or (level >= depth[0] and rng.random() < LEAF_CHANCE)

    def draw() -> Number:
        if values == "int":
            return rng.randint(*cast(tuple[int, int], value_range))  # _check_arguments: int ends for int values
        return round(rng.uniform(*value_range), 1) + 0.0  # + 0.0 turns -0.0 into 0.0

    def grow(node: str, level: int) -> None:
        kids = tuple(name(level + 1) for _ in range(rng.randint(*branching)))
        children[node] = kids
        sibling_values: list[Number] = []
        for kid in kids:
            if not is_leaf(level + 1):
                grow(kid, level + 1)
                continue
            tie = bool(sibling_values) and rng.random() < tie_rate
            leaf_values[kid] = rng.choice(sibling_values) if tie else draw()
            sibling_values.append(leaf_values[kid])

    root = name(0)
    if is_leaf(0):
        leaf_values[root] = draw()
    else:
        grow(root, 0)
    return GameTree(root, children, leaf_values)


def random_trees(seed: int | random.Random, count: int, **kwargs) -> list[GameTree]:
    """`count` trees drawn one after another from one seeded generator (kwargs as for `random_tree`)."""
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    return [random_tree(rng, **kwargs) for _ in range(count)]


def level_letters(level: int) -> str:
    """The letters naming a depth: 0 -> 'a', 25 -> 'z', 26 -> 'aa', 27 -> 'ab' (like spreadsheet columns)."""
    letters = ""
    level += 1
    while level:
        level, rest = divmod(level - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters


def _check_arguments(
    branching: tuple[int, int],
    depth: tuple[int, int],
    values: str,
    value_range: tuple[Number, Number],
    tie_rate: float,
) -> None:
    if not 1 <= branching[0] <= branching[1]:
        raise ValueError(f"branching must be a range (low, high) with 1 <= low <= high, not {branching}")
    if not 0 <= depth[0] <= depth[1]:
        raise ValueError(f"depth must be a range (low, high) with 0 <= low <= high, not {depth}")
    if values not in ("int", "float"):
        raise ValueError(f"values must be 'int' or 'float', not {values!r}")
    if not value_range[0] <= value_range[1]:
        raise ValueError(f"value_range must be (low, high) with low <= high, not {value_range}")
    if values == "int" and not all(isinstance(end, int) for end in value_range):
        raise ValueError(f"integer values need integer value_range ends, not {value_range}")
    if not 0 <= tie_rate <= 1:
        raise ValueError(f"tie_rate must be between 0 and 1, not {tie_rate}")
