"""Random trees for hidden cases, reproducible from the run's seed."""

from __future__ import annotations

from reference.random_trees import random_tree
from reference.trees import GameTree

from ...spec import Spec
from ..kit.random_settings import Setting, read_settings, rng

# the generator's own defaults apply to settings the spec leaves out (reference.random_trees)
RANDOM_SETTINGS = {key: Setting() for key in ("branching", "depth", "values", "value_range", "tie_rate", "scale")}


def random_trees(spec: Spec, seed: int) -> list[GameTree]:
    assert spec.random is not None
    params = read_settings(spec, RANDOM_SETTINGS)
    for key in ("branching", "depth", "value_range"):
        if key in params:
            params[key] = tuple(params[key]) if isinstance(params[key], list) else params[key]
    scale = params.pop("scale", 1)
    try:
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale <= 0:
            raise ValueError(f"scale must be a positive number, not {scale!r}")
        trees = [random_tree(rng(seed, i), **params) for i in range(spec.random.count)]
        return trees if scale == 1 else [scaled(tree, scale) for tree in trees]
    except (TypeError, ValueError) as exc:
        raise spec.error(spec.raw, "random", "random", f"bad generator settings: {exc}") from None


def scaled(tree: GameTree, scale: float) -> GameTree:
    """Every leaf value times `scale`: values far beyond any number a student might use as
    "infinity" (and floats), while ties (equal small values) stay ties."""
    graph, leaves = tree.to_mapping()
    return GameTree.from_mapping(graph, {leaf: value * scale for leaf, value in leaves.items()}, tree.root)
