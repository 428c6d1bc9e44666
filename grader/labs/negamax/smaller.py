"""Smaller positions made from a failing random position of the negamax lab: tic-tac-toe one
move later, Nim with a heap gone or an object fewer, a tree with subtrees cut or values
made smaller (kit/smaller_trees.py). Each is a position of its own game (a Nim or tree game
configured anew), unfinished, so every call of the random case still makes sense there."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from reference.games import load_game
from reference.trees import GameTree

from ..kit.messages import counted
from ..kit.smaller_trees import smaller_trees, tree_size, tree_text
from .cases import Position


def position_size(position: Position) -> tuple[tuple[int, ...], str]:
    """The position's measures (Shrinkable.size) and their words, saying nothing of the
    position itself (the random case's are shown with a hidden case)."""
    game = position.game
    if game.name == "tictactoe":
        empty = str(position.state).count(".")
        return (empty,), f"a tic-tac-toe position with {counted(empty, 'empty cell')}"
    if game.name == "nim":
        heaps = position.state[0]
        return (
            sum(heaps),
            len(heaps),
        ), f"Nim with {counted(len(heaps), 'heap')} of {counted(sum(heaps), 'object')} in all"
    if game.name == "tree":
        tree = _tree(position)
        return tree_size(tree), tree_text(tree)
    return (), f"a position of {game.name}"  # a game that can't shrink: no candidate is smaller


def smaller_positions(position: Position) -> Iterator[Position]:
    game = position.game
    if game.name == "tictactoe":
        for state in game.next_states(position.state, position.player):
            if not game.finished(state):
                yield replace(position, state=state, player=game.other(position.player))
    elif game.name == "nim":
        yield from _smaller_nim(position)
    elif game.name == "tree":
        for tree in smaller_trees(_tree(position)):
            if not tree.is_leaf(tree.root):  # a finished root has no move for best_move
                graph, leaves = tree.to_mapping()
                smaller = load_game("tree", graph=graph, terminal_nodes=leaves, root=tree.root)
                yield replace(position, game=smaller, state=smaller.start)


def _tree(position: Position) -> GameTree:
    params = position.game.params
    return GameTree.from_mapping(params["graph"], params["terminal_nodes"], position.state)


def _smaller_nim(position: Position) -> Iterator[Position]:
    """A heap left out, then a heap one object smaller; the same player to move."""
    heaps, to_move = position.state
    shapes = [heaps[:i] + heaps[i + 1 :] for i in range(len(heaps)) if len(heaps) > 1]
    shapes += [heaps[:i] + (size - 1,) + heaps[i + 1 :] for i, size in enumerate(heaps) if size > 0]
    for shape in dict.fromkeys(shapes):
        if any(shape):
            game = load_game("nim", heaps=list(shape))
            yield replace(position, game=game, state=(tuple(shape), to_move))
