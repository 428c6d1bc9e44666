"""Notebooks per minute (issue 19, part 2: 1,000 small lab notebooks in under 3 minutes on
this 2-core machine, i.e. over 330 per minute): `abgrade batch` over N small notebooks of
the tree lab (the reference solution, correct variants and classic bugs, as students write
them), with 1 and with 2 jobs, timed as a user runs it (`python -m grader batch`, a fresh
output folder each round).

Configurations are compared side by side, rounds interleaved (A, B, A, B, ...), and the
min / median / max of each is printed:

- `now`: this checkout as it is (the kernel zygote on, where the machine allows it, and
  each grader process starting its next notebook's kernel while it grades the one before);
- `no-ahead`: with `--no-ahead`, this checkout with ABGRADE_KERNEL_AHEAD=0 (each kernel
  starts when its grading does);
- `no-zygote`: this checkout with ABGRADE_KERNEL_ZYGOTE=0 (one fresh interpreter per
  kernel);
- `base`: with `--base DIR`, another checkout of the project (e.g. `git worktree add
  /tmp/base f02ab7f`), run with that folder as its current directory.

    python bench/bench_notebook_batch.py [--notebooks 100] [--rounds 3] [--jobs 1 2] [--base DIR] [--no-ahead]

The load average is printed before and after each run: the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(PROJECT))

from rounds import tree_class  # noqa: E402  (bench/rounds.py)

from tests.notebook_builder import notebook_from_py  # noqa: E402

SOURCES = tree_class()


def class_folder(root: Path, count: int) -> Path:
    folder = root / "class"
    folder.mkdir()
    for number in range(count):
        source = SOURCES[number % len(SOURCES)]
        notebook_from_py(source, folder / f"s{number:04d}_{source.stem}.ipynb")
    return folder


def batch(folder: Path, jobs: int, out: Path, cwd: Path, env: dict[str, str]) -> float:
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "grader", "batch", str(folder), "--lab", "tree", "--jobs", str(jobs)]
        + ["--seed", "1", "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=env,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"abgrade batch failed ({cwd}):\n{done.stderr[-2000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notebooks", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--base", type=Path, help="another checkout to compare with (run from that folder)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the ABGRADE_KERNEL_ZYGOTE=0 rounds")
    parser.add_argument("--no-ahead", action="store_true", help="add ABGRADE_KERNEL_AHEAD=0 rounds")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("ABGRADE_KERNEL_ZYGOTE", "ABGRADE_KERNEL_AHEAD")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    configurations = {"now": (PROJECT, env)}
    if args.no_ahead:
        configurations["no-ahead"] = (PROJECT, {**env, "ABGRADE_KERNEL_AHEAD": "0"})
    if not args.no_baseline:
        configurations["no-zygote"] = (PROJECT, {**env, "ABGRADE_KERNEL_ZYGOTE": "0"})
    if args.base:
        configurations["base"] = (args.base.resolve(), env)
    root = Path(tempfile.mkdtemp(prefix="abgrade-bench-nb-"))
    try:
        folder = class_folder(root, args.notebooks)
        times: dict[tuple[str, int], list[float]] = {}
        for _ in range(args.rounds):
            for jobs in args.jobs:
                for name, (cwd, environment) in configurations.items():  # interleaved
                    before = os.getloadavg()[0]
                    seconds = batch(folder, jobs, root / "out", cwd, environment)
                    times.setdefault((name, jobs), []).append(seconds)
                    after = os.getloadavg()[0]
                    print(
                        f"  {name:<10} {jobs} job(s): {seconds:6.1f} s (load {before:.1f} -> {after:.1f})", flush=True
                    )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"{args.notebooks} notebooks of the tree lab, {args.rounds} interleaved rounds, notebooks per minute")
    print(f"  {'configuration':<14}{'jobs':>5}{'min':>9}{'median':>9}{'max':>9}   seconds (min / median / max)")
    for (name, jobs), values in times.items():
        rates = sorted(args.notebooks * 60 / s for s in values)
        print(
            f"  {name:<14}{jobs:>5}{rates[0]:9.1f}{statistics.median(rates):9.1f}{rates[-1]:9.1f}"
            f"   {min(values):.1f} / {statistics.median(values):.1f} / {max(values):.1f}"
        )


if __name__ == "__main__":
    main()
