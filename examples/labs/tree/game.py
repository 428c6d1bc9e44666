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


# A failed hidden tree is shrunk: the grader tries these smaller trees in order, sends the
# first on which the student's search still fails to the student's code, and goes on from it.


def smaller(case):
    """Smaller trees, biggest cut first: every value made its rank (small whole numbers in
    the same order), a child dropped (the biggest subtree first), a node made a leaf (the
    value of its first leaf), a node replaced by a grandchild, a leaf's value towards 0.
    Each has fewer values, or as many and smaller ones (the grader checks it)."""
    children, leaves = case["world"]["graph"], case["world"]["terminal_nodes"]
    ranked = _ranked(leaves)
    if all(abs(ranked[leaf]) <= abs(value) for leaf, value in leaves.items()) and ranked != leaves:
        yield _case(case, children, ranked)
    inner = [node for node in children if children[node]]
    cuts = [kid for node in inner if len(children[node]) > 1 for kid in children[node]]
    for kid in sorted(cuts, key=lambda kid: -len(_subtree(children, kid))):  # the biggest subtree first
        gone = _subtree(children, kid)
        kept = {n: [k for k in kids if k != kid] for n, kids in children.items() if n not in gone}
        yield _case(case, kept, {leaf: v for leaf, v in leaves.items() if leaf not in gone})
    for node in inner:
        gone = _subtree(children, node)
        first = next(n for n in gone if n in leaves)  # the subtree's first leaf, in search order
        kept = {n: kids for n, kids in children.items() if n not in gone}
        yield _case(case, kept, {**{leaf: v for leaf, v in leaves.items() if leaf not in gone}, node: leaves[first]})
    for node in inner:  # a node replaced by a grandchild's subtree: every node keeps its player
        for grandchild in (g for kid in children[node] for g in children.get(kid, ())):
            gone = set(_subtree(children, node)) - set(_subtree(children, grandchild))
            kept = {n: [grandchild if k == node else k for k in kids] for n, kids in children.items() if n not in gone}
            root = grandchild if node == case["call"]["node"] else case["call"]["node"]
            trimmed = {leaf: v for leaf, v in leaves.items() if leaf not in gone}
            yield {"world": {"graph": kept, "terminal_nodes": trimmed}, "call": {**case["call"], "node": root}}
    for leaf, value in leaves.items():
        for nearer in dict.fromkeys((0, int(value / 2))):
            if abs(nearer) < abs(value):
                yield _case(case, children, {**leaves, leaf: nearer})


def _case(case, children, leaves):
    return {"world": {"graph": children, "terminal_nodes": leaves}, "call": case["call"]}


def _subtree(children, node):
    """`node` and everything below it, in search order."""
    found = [node]
    for kid in children.get(node, ()):
        found += _subtree(children, kid)
    return found


def _ranked(leaves):
    """Each value replaced by its rank among the values of its sign: -2, -1, 0, 1, 2, ..."""
    negatives = sorted({v for v in leaves.values() if v < 0}, reverse=True)
    positives = sorted({v for v in leaves.values() if v > 0})
    rank = {v: -(i + 1) for i, v in enumerate(negatives)} | {v: i + 1 for i, v in enumerate(positives)}
    return {leaf: rank.get(v, 0) for leaf, v in leaves.items()}
