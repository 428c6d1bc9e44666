"""An explicit game tree behind the negamax game interface.

Self-contained (standard library only): the grader ships this file's source
text into the student's process, where its functions become the globals the
student's `value` / `alphaBeta` / `best_move` call.

A state is a node name (a string, so it is hashable and plain JSON). `graph`
maps each inner node to its children in search order; `terminal_nodes` maps
each leaf to its value -1, 0 or 1 for player 0 (the game is zero-sum, so
player 1 gets the negation). Player 0 moves at the root and the players
alternate level by level. The tree must be acyclic.
"""

Players = [0, 1]

#          a                 player 0 to move; value 0
#   b1     b2      b3        player 1
#  c1 c2  c3 c4   c5 c6=-1   player 0
# d1 d2 d3 d4 d5 d6 d7 d8 d9 d10
graph = {
    "a": ["b1", "b2", "b3"],
    "b1": ["c1", "c2"],
    "b2": ["c3", "c4"],
    "b3": ["c5", "c6"],
    "c1": ["d1", "d2"],
    "c2": ["d3", "d4"],
    "c3": ["d5", "d6"],
    "c4": ["d7", "d8"],
    "c5": ["d9", "d10"],
}
terminal_nodes = {
    "d1": -1,
    "d2": 0,
    "d3": 1,
    "d4": -1,
    "d5": -1,
    "d6": -1,
    "d7": 1,
    "d8": 0,
    "d9": 0,
    "d10": 1,
    "c6": -1,
}
Start = "a"


def configure(graph, terminal_nodes, root=None):
    """Play on another tree. `root` defaults to the one inner node that is
    nobody's child."""
    new_graph, new_leaves = _checked_tree(graph, terminal_nodes)
    if root is None:
        children = {child for kids in new_graph.values() for child in kids}
        roots = [node for node in new_graph if node not in children]
        if len(roots) != 1:
            raise ValueError(f"give the root: the tree has candidate roots {roots}")
        root = roots[0]
    if root not in new_graph and root not in new_leaves:
        raise ValueError(f"root {root!r} is not a node of the tree")
    # The parameters shadow the module's names, hence globals() instead of `global`.
    globals().update(graph=new_graph, terminal_nodes=new_leaves, Start=root)


def _checked_tree(graph, terminal_nodes):
    """Copies of the two mappings, after checking that they describe a tree
    of string nodes with leaf values in {-1, 0, 1}."""
    new_graph = {node: list(kids) for node, kids in graph.items()}
    new_leaves = dict(terminal_nodes)
    if not all(isinstance(node, str) for node in [*new_graph, *new_leaves]):
        raise ValueError("node names must be strings")
    for node, kids in new_graph.items():
        if not kids:
            raise ValueError(f"inner node {node!r} has no children")
        for child in kids:
            if child not in new_graph and child not in new_leaves:
                raise ValueError(f"child {child!r} of {node!r} is neither inner node nor leaf")
    for leaf, value in new_leaves.items():
        if leaf in new_graph:
            raise ValueError(f"node {leaf!r} is both an inner node and a leaf")
        if type(value) is not int or value not in (-1, 0, 1):
            raise ValueError(f"leaf {leaf!r} has value {value!r}, not -1, 0 or 1")
    return new_graph, new_leaves


def next_states(state, player):
    """The children of the node, in the order `graph` lists them."""
    return list(graph.get(state, ()))


def finished(state):
    """The node is a leaf."""
    return state in terminal_nodes


def utility(state, player):
    """The leaf's value for `player` (negated for player 1); None at an inner node."""
    if state not in terminal_nodes:
        return None
    value = terminal_nodes[state]
    return value if player == Players[0] else -value


def describe(state):
    """e.g. 'node b1 -> c1, c2' or 'leaf d3, value 1 for player 0'."""
    if state in terminal_nodes:
        return f"leaf {state}, value {terminal_nodes[state]} for player 0"
    return f"node {state} -> {', '.join(graph.get(state, ()))}"


def encode(state):
    """The state as JSON data: the node name itself."""
    return _checked_node(state)


def decode(obj):
    """The state that `encode` turned into `obj`."""
    return _checked_node(obj)


def _checked_node(obj):
    if not (isinstance(obj, str) and (obj in graph or obj in terminal_nodes)):
        raise ValueError(f"not a node of the tree: {obj!r}")
    return obj
