"""The agents lab's reference: time and `step` calls of the first move (from the empty
board) with and without alpha-beta pruning, at tic-tac-toe (`minimax_ttt`) and at Connect
Four (`minimax_conn`, depth 3 by default). Rounds are interleaved (every case once per
round) so that the machine's load weighs on all cases alike; min/median/max per case.
The chapter reports 29 s without pruning and 1.6 s with it at tic-tac-toe (94% less).

    python bench/bench_agents_reference.py [--rounds 5] [--depth 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from reference.agents import CHAPTER, NO_PRUNING, decide
from reference.envs import conn, ttt


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--depth", type=int, default=3, help="Connect Four search depth (chapter: 3)")
    args = parser.parse_args()
    cases = {
        "tic-tac-toe, pruned": (ttt, None, CHAPTER),
        "tic-tac-toe, unpruned": (ttt, None, NO_PRUNING),
        f"Connect Four depth {args.depth}, pruned": (conn, args.depth, CHAPTER),
        f"Connect Four depth {args.depth}, unpruned": (conn, args.depth, NO_PRUNING),
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    steps: dict[str, set[int]] = {name: set() for name in cases}
    for _ in range(args.rounds):
        for name, (env_class, depth, variant) in cases.items():
            env = env_class()
            start = time.perf_counter()
            decision = decide(env, depth, variant)
            times[name].append(time.perf_counter() - start)
            steps[name].add(decision.steps)
    print(f"first move from the empty board, {args.rounds} interleaved rounds")
    print(f"  {'case':<34} {'steps':>8}  {'min':>9} {'median':>9} {'max':>9}")
    for name in cases:
        (count,) = steps[name]  # deterministic: one count per case
        low, mid, high = min(times[name]), statistics.median(times[name]), max(times[name])
        print(f"  {name:<34} {count:8,d}  {low:8.3f}s {mid:8.3f}s {high:8.3f}s")
    for game in ("tic-tac-toe", f"Connect Four depth {args.depth}"):
        (pruned,), (unpruned,) = steps[f"{game}, pruned"], steps[f"{game}, unpruned"]
        speed = statistics.median(times[f"{game}, unpruned"]) / statistics.median(times[f"{game}, pruned"])
        print(f"  {game}: {1 - pruned / unpruned:.1%} fewer steps with pruning, {speed:.1f}x faster (median)")


if __name__ == "__main__":
    main()
