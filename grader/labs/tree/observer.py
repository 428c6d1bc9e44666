"""Observer of the `tree` lab: instrumented `graph` / `terminal_nodes` that record reads.

A node is read when `graph[node]` / `graph.get(node)` returns its children, or a leaf when
`terminal_nodes[leaf]` / `.get(leaf)` returns its value (DESIGN.md). Membership tests,
absent keys and repeated reads add nothing.
"""

from _abgrade_runtime import call_observed, set_global, student_namespaces


class ReadLog:
    """Nodes in the order they were first read."""

    def __init__(self):
        self.order = []
        self._seen = set()

    def add(self, node):
        if node not in self._seen:
            self._seen.add(node)
            self.order.append(node)


class WatchedMapping(dict):
    """A dict that logs every successful read of a key (`m[key]` and `m.get(key)`), and
    hands out what `hand_out` makes of the stored value."""

    def __init__(self, data, log):
        dict.__init__(self, data)
        self._log = log

    def hand_out(self, value):
        return value

    def __getitem__(self, key):
        value = dict.__getitem__(self, key)
        self._log.add(key)
        return self.hand_out(value)

    def get(self, key, default=None):
        if dict.__contains__(self, key):
            return self[key]
        return default


class WatchedGraph(WatchedMapping):
    """`graph`: node -> children; each read hands out a fresh list, so a student who
    sorts or pops the children cannot corrupt later reads."""

    def hand_out(self, value):
        return list(value)


class WatchedLeaves(WatchedMapping):
    """`terminal_nodes`: leaf -> value."""


def handle(namespace, request):
    """Run the calls of one case, each with fresh instrumented globals, set wherever the
    student's functions look them up (a notebook's `%run sol.py` or `from sol import ...`
    gives them globals of their own: runtime.student_namespaces)."""
    function = namespace.get("alphabeta")
    spaces = student_namespaces(namespace)
    observations = []
    for node, alpha, beta, max_player in request["calls"]:
        log = ReadLog()
        set_global(spaces, "graph", WatchedGraph(request["graph"], log))
        set_global(spaces, "terminal_nodes", WatchedLeaves(request["terminal_nodes"], log))
        returned, error, seconds = call_observed(function, (node, alpha, beta, max_player))
        observations.append({"returned": returned, "error": error, "reads": log.order, "seconds": seconds})
        if error and (error["exit"] or error["memory"]):
            break
    return {"op": "case", "id": request["id"], "calls": observations}
