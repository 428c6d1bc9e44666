"""A correct fail-hard submission of the tree lab (bundled for `abgrade demo`)."""

graph: dict[str, list[str]] = {}  # set by the grader for each case
terminal_nodes: dict[str, float] = {}


def alphabeta(node, alpha, beta, max_player):
    if node in terminal_nodes:
        return terminal_nodes[node]
    for child in graph[node]:
        value = alphabeta(child, alpha, beta, not max_player)
        if max_player:
            alpha = max(alpha, value)
        else:
            beta = min(beta, value)
        if alpha >= beta:
            break
    return alpha if max_player else beta
