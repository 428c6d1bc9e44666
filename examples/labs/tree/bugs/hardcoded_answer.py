"""Returns the course example's value without reading the tree."""

HINT = "You return 4, the example's value, without reading the tree: compute the value from graph and terminal_nodes."

graph = {}
terminal_nodes = {}


def alphabeta(node, alpha, beta, max_player):
    return 4
