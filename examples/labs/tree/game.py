"""The tree lab as a lab folder: alpha-beta on an explicit game tree.

The student's module has two globals: `graph` (node -> its children, in search order)
and `terminal_nodes` (leaf -> its value). The grader replaces both before every call
with the case's tree, watched: a node is read when `graph[node]` (or `graph.get(node)`)
returns its children, a leaf when `terminal_nodes[leaf]` returns its value. Membership
tests and repeated reads are no new reads. The first call is
`alphabeta(root, -math.inf, math.inf, True)`.
"""

STUDENT_API = {"alphabeta": "alphabeta(node, alpha, beta, max_player)"}
SEARCH = "alphabeta"
STATE = "node"
WATCH = {"graph": "state", "terminal_nodes": "state"}
GLOBALS = ("graph", "terminal_nodes")
MODULE = "tree_game"

graph = {}
terminal_nodes = {}


def setup(graph, terminal_nodes):
    """A case's tree (the spec's `world`)."""
    globals().update(
        graph={node: list(children) for node, children in graph.items()},
        terminal_nodes=dict(terminal_nodes),
    )


def probes(call):
    """The bound specification is tried at every inner node, MAX and MIN by depth."""
    found = []

    def walk(node, max_player):
        if graph.get(node):
            found.append({"node": node, "max_player": max_player})
            for child in graph[node]:
                walk(child, not max_player)

    walk(call["node"], call["max_player"])
    return found


def tree(call):
    """The whole tree, so that feedback can name the pruned subtrees."""
    return {node: list(children) for node, children in graph.items()}


# Hidden cases: random trees, uneven, with ties; node names 'a0', 'b0', 'b1', ... by depth.


def random_case(rng, branching=(2, 3), depth=(2, 4), values="int", value_range=(-9, 9), tie_rate=0.25, scale=1):
    """A random tree: `branching` children per inner node, leaves at `depth` (ranges; a node
    between the two depths is a leaf half the time), values drawn from `value_range` (whole
    numbers or with one decimal) times `scale`; with chance `tie_rate` a leaf repeats an
    earlier sibling's value (ties, alpha == beta cut-offs)."""
    branching, depth, value_range = tuple(branching), tuple(depth), tuple(value_range)
    if not 1 <= branching[0] <= branching[1] or not 0 <= depth[0] <= depth[1]:
        raise ValueError(f"branching and depth must be ranges [low, high], got {branching} and {depth}")
    if values not in ("int", "float") or not value_range[0] <= value_range[1] or not 0 <= tie_rate <= 1:
        raise ValueError("values is 'int' or 'float', value_range [low, high], tie_rate between 0 and 1")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale <= 0:
        raise ValueError(f"scale must be a positive number, not {scale!r}")
    counters, children, leaves = {}, {}, {}

    def name(level):
        number = counters.get(level, 0)
        counters[level] = number + 1
        letters, rest = "", level + 1
        while rest:
            rest, digit = divmod(rest - 1, 26)
            letters = chr(ord("a") + digit) + letters
        return f"{letters}{number}"

    def is_leaf(level):
        return level >= depth[1] or (level >= depth[0] and rng.random() < 0.5)

    def draw():
        if values == "int":
            return rng.randint(*value_range)
        return round(rng.uniform(*value_range), 1) + 0.0

    def grow(node, level):
        kids = [name(level + 1) for _ in range(rng.randint(*branching))]
        children[node] = kids
        siblings = []
        for kid in kids:
            if not is_leaf(level + 1):
                grow(kid, level + 1)
                continue
            tie = bool(siblings) and rng.random() < tie_rate
            leaves[kid] = rng.choice(siblings) if tie else draw()
            siblings.append(leaves[kid])

    root = name(0)
    if is_leaf(0):
        leaves[root] = draw()
    else:
        grow(root, 0)
    if scale != 1:
        leaves = {leaf: value * scale for leaf, value in leaves.items()}
    return {"world": {"graph": children, "terminal_nodes": leaves}, "call": {"node": root, "max_player": True}}
