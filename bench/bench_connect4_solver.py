"""The connect4 reference solver on Pons' Test_L3_R1: all 1,000 positions solved and checked
against their published scores, in each of Pons' four counted configurations and with our
transposition table, for several rounds, interleaved (each round runs every configuration
once, in turn). Prints, per configuration, the mean node count
beside Pons' published one, the time for the 1,000 positions and nodes per second (min,
median and max over the rounds). Pons' published figures compared here are his mean node
counts (the shared README); his timings, measured in C++ on his machine, are not in the
course's shared material and are not restated. Goal: the whole set solved and checked in
under 10 s (pure Python).

    python bench/bench_connect4_solver.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from rounds import interleave  # bench/rounds.py, next to this script

from reference import connect4_solver as solver

# (label, solve() keywords, Pons' published mean node count or None)
CONFIGURATIONS = [
    ("full window, left to right", {}, 283.6),
    ("full window, centre first", {"centre_first": True}, 139.7),
    ("window (-1, 1), left to right", {"weak": True}, 222.9),
    ("window (-1, 1), centre first", {"weak": True, "centre_first": True}, 107.1),
    ("full window, centre first, table", {"centre_first": True, "table": True}, None),
]


def run(positions: list, options: dict) -> tuple[float, int]:
    """Solve and check every position once -> (seconds, total nodes)."""
    options = dict(options)
    use_table = options.pop("table", False)
    weak = options.get("weak", False)
    nodes = 0
    start = time.perf_counter()
    for moves, score in positions:
        found = solver.solve(solver.from_moves(moves), table={} if use_table else None, **options)
        expected = ((score > 0) - (score < 0)) if weak else score
        if found.score != expected:
            raise SystemExit(f"{moves}: score {found.score}, the test set says {expected}")
        nodes += found.nodes
    return time.perf_counter() - start, nodes


def spread(values: list[float], digits: int = 2) -> str:
    return " / ".join(f"{v:,.{digits}f}" for v in (min(values), statistics.median(values), max(values)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    positions = solver.load_test_set("Test_L3_R1")
    print(f"Test_L3_R1, {len(positions)} positions, {args.rounds} rounds; min / median / max")
    nodes: dict[str, int] = {}

    def contender(label: str, options: dict) -> Callable[[], float]:
        def measure() -> float:
            seconds, nodes[label] = run(positions, options)
            return seconds

        return measure

    # interleaved: each round solves the set once per configuration, in turn
    times = interleave({label: contender(label, options) for label, options, _ in CONFIGURATIONS}, args.rounds)
    for label, _, published in CONFIGURATIONS:
        rates = [nodes[label] / seconds for seconds in times[label]]
        pons = f"{published:.1f}" if published is not None else "-"
        print(
            f"{label:34} mean nodes {nodes[label] / len(positions):7.3f} (Pons {pons:>5})"
            f"  time {spread(times[label])} s  nodes/s {spread(rates, 0)}"
        )


if __name__ == "__main__":
    main()
