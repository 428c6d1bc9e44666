"""The tree lab's picture: its cases drawn by the kit's tree drawer (the negamax lab's game
trees use the same one)."""

from __future__ import annotations

from ..kit.pictures.tree import COLLAPSE_ABOVE, layout, tree_figure

__all__ = ["COLLAPSE_ABOVE", "layout", "tree_figure"]
