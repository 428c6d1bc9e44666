"""The `tree` lab: `alphabeta(node, alpha, beta, max_player)` over module globals `graph`
and `terminal_nodes` (DESIGN.md). The observer records which nodes are read; this package
plans the calls and judges the reads against the reference."""

from .adapter import TreeLab

__all__ = ["TreeLab"]
