"""Start-up of one student process at each isolation level: from nothing to the observer
having loaded a tiny `.py` submission (session opened, worker started and confined, the
setup answered), against the same measurement on the code before the least-privilege
sandbox (a git worktree of BASE, run in its own interpreter). Rounds are interleaved
(A, B, A, B, ...) so that load on the machine hits both alike. Goal: the default level
no more than 30 ms slower than before.

    python bench/bench_startup.py [--runs 30] [--base 1412081]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
ONE_START = r"""
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from grader.labs import get_lab
from grader.sandbox.opening import open_session
from grader.spec.model import Limits
lab = get_lab("tree")
submission = Path(sys.argv[2])
times = []
for _ in range(int(sys.argv[3])):
    started = time.perf_counter()
    with open_session(submission) as session:
        session.configure(lab.probe, Limits())
        loaded = session.load()
        assert loaded.failure is None, loaded.failure
    times.append(time.perf_counter() - started)
print(" ".join(f"{t:.6f}" for t in times))
"""


def measure(tree: Path, level: str, submission: Path, runs: int) -> list[float]:
    env = {**os.environ, "ABGRADE_ISOLATION": "process" if level == "process" else ""}
    done = subprocess.run(
        [sys.executable, "-c", ONE_START, str(tree), str(submission), str(runs)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),
        check=True,
    )
    return [float(x) for x in done.stdout.split()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--base", default="1412081", help="the commit to compare with")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="abgrade-bench-base-"))
    subprocess.run(
        ["git", "-C", str(PROJECT), "worktree", "add", "--detach", str(base), args.base],
        check=True,
        capture_output=True,
    )
    submission = Path(tempfile.mkdtemp(prefix="abgrade-bench-sub-")) / "lab.py"
    submission.write_text((PROJECT / "reference" / "solutions" / "tree.py").read_text())
    rows = {(name, level): [] for name in ("before", "now") for level in ("namespaces", "process")}
    try:
        for _ in range(args.runs // 5):  # interleaved rounds of 5 starts each
            for level in ("namespaces", "process"):
                rows[("before", level)] += measure(base, level, submission, 5)
                rows[("now", level)] += measure(PROJECT, level, submission, 5)
    finally:
        subprocess.run(["git", "-C", str(PROJECT), "worktree", "remove", "--force", str(base)], capture_output=True)
    print(f"one student process started, confined and loaded ({args.runs} starts, ms: min / median / max)")
    for level in ("namespaces", "process"):
        for name in ("before", "now"):
            xs = sorted(t * 1000 for t in rows[(name, level)])
            print(f"  {level:<11}{name:<8}{xs[0]:7.1f} {statistics.median(xs):7.1f} {xs[-1]:7.1f}")
        delta = statistics.median(rows[("now", level)]) - statistics.median(rows[("before", level)])
        print(f"  {level:<11}{'change':<8}{delta * 1000:+7.1f} ms   (goal at the default level: <= +30 ms)")


if __name__ == "__main__":
    main()
