"""A submission of the tree lab with a classic bug: it cuts off only when alpha > beta,
so equal bounds keep the loop going (bundled for `abgrade demo`)."""

from math import inf

graph: dict[str, list[str]] = {}  # set by the grader for each case
terminal_nodes: dict[str, float] = {}


def alphabeta(node, alpha, beta, max_player):
    if node in terminal_nodes:
        return terminal_nodes[node]
    if max_player:
        best = -inf
        for child in graph[node]:
            best = max(best, alphabeta(child, alpha, beta, False))
            alpha = max(alpha, best)
            if alpha > beta:
                break
        return best
    best = inf
    for child in graph[node]:
        best = min(best, alphabeta(child, alpha, beta, True))
        beta = min(beta, best)
        if alpha > beta:
            break
    return best
