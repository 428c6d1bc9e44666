"""The bare run the tree benchmark compares against: import the submission in a plain
Python process and make exactly the calls the grader makes (read from a JSON file),
with plain dicts for `graph` and `terminal_nodes`. No sandbox, no observer, no judging."""

import importlib.util
import json
import sys


def main(cases_file: str, submission: str) -> None:
    with open(cases_file) as handle:
        requests = json.load(handle)
    spec = importlib.util.spec_from_file_location("submission", submission)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for request in requests:
        for node, alpha, beta, max_player in request["calls"]:
            module.graph = request["graph"]
            module.terminal_nodes = request["terminal_nodes"]
            module.alphabeta(node, alpha, beta, max_player)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
