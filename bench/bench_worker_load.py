"""The `.py` worker's part of loading a submission (issue 26, goal 1): a session opened, the
worker started and confined, the submission (the tree lab's solution) loaded, with the
observer's modules shipped compiled by the grader (as `grade` does) or as sources the
student process compiles (as before). Interleaved rounds; wall time, and the student
process tree's own CPU time from the moment it was handed the setup (its cgroup's clock,
which a busy machine does not inflate).

    python bench/bench_worker_load.py [--rounds 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from grader.labs import get_lab
from grader.sandbox import session as session_module
from grader.sandbox.opening import open_session
from grader.spec.model import Limits

PROJECT = Path(__file__).resolve().parent.parent
COMPILED = session_module.ProbeSetup.compiled_modules


def as_sources(probe: session_module.ProbeSetup) -> list:
    return [list(module) for module in probe.modules()]


def one_load(submission: Path, compiled: bool) -> tuple[float, float]:
    """(wall seconds, the student's CPU seconds) of one session's load."""
    session_module.ProbeSetup.compiled_modules = COMPILED if compiled else as_sources  # type: ignore[method-assign]
    lab = get_lab("tree")
    started = time.perf_counter()
    with open_session(submission) as session:
        session.configure(lab.probe, Limits())
        loaded = session.load()
        assert loaded.failure is None, loaded.failure
        cpu = session.cpu_used()
    return time.perf_counter() - started, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    submission = Path(tempfile.mkdtemp(prefix="abgrade-bench-load-")) / "lab.py"
    submission.write_text((PROJECT / "reference" / "solutions" / "tree.py").read_text())
    rows: dict[str, list[tuple[float, float]]] = {"compiled": [], "sources": []}
    load_before = os.getloadavg()
    for _ in range(args.rounds):
        for name in rows:
            rows[name].append(one_load(submission, name == "compiled"))
    print(f"one .py worker loading the tree solution, {args.rounds} interleaved rounds")
    print(f"load average before / after: {load_before[0]:.2f} / {os.getloadavg()[0]:.2f}")
    print(f"  {'modules shipped':<18}{'wall ms (min / median / max)':>32}{'student CPU ms (median)':>26}")
    for name, values in rows.items():
        walls = sorted(w * 1000 for w, _ in values)
        cpu = statistics.median(c * 1000 for _, c in values)
        spread = f"{walls[0]:.1f} / {statistics.median(walls):.1f} / {walls[-1]:.1f}"
        print(f"  {name:<18}{spread:>32}{cpu:>26.1f}")


if __name__ == "__main__":
    main()
