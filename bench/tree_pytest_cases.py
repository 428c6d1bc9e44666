"""The hand-written pytest file that bench_tree.py compares one `abgrade grade` with: the
tree lab's cases written out as a teacher would write them (the trees and calls inline,
the expected values and read orders taken from the reference solution when the bench
writes this file), checked in a plain `pytest` run of the submission. Not collected by the
project's own tests (its name does not start with `test_`); bench_tree.py fills in CASES
and SUBMISSION in a copy of this file."""

import importlib.util

import pytest

CASES: list = []  # (graph, terminal_nodes, [(node, alpha, beta, max_player, value, reads), ...])
SUBMISSION = ""


class Recording(dict):
    """A tree dictionary that notes every key the search reads."""

    def __init__(self, items, reads):
        super().__init__(items)
        self.reads = reads

    def __getitem__(self, key):
        self.reads.append(key)
        return super().__getitem__(key)


@pytest.fixture(scope="module")
def submission():
    spec = importlib.util.spec_from_file_location("submission", SUBMISSION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def within_bounds(result, value, alpha, beta):
    """Fail-soft and fail-hard answers both pass outside the window."""
    if value < alpha:
        return result <= alpha
    if value > beta:
        return result >= beta
    return result == value


@pytest.mark.parametrize("case", range(len(CASES)))
def test_case(submission, case):
    graph, terminal_nodes, calls = CASES[case]
    for node, alpha, beta, max_player, value, expected_reads in calls:
        reads: list = []
        submission.graph = Recording(graph, reads)
        submission.terminal_nodes = Recording(terminal_nodes, reads)
        result = submission.alphabeta(node, alpha, beta, max_player)
        assert within_bounds(result, value, alpha, beta), (node, alpha, beta, result, value)
        if (alpha, beta) == (float("-inf"), float("inf")):
            assert reads == expected_reads
