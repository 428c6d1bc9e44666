"""What the benchmarks share: timing one command as a user runs it, and rounds interleaved
A, B, A, B, ... (every contender once per round, in the same order), so that a busy moment
on a shared machine weighs on all of them alike; each is reported as min / median / max,
and ratios per round (A's round against B's same round).

Environment: this container sets PYTHONDONTWRITEBYTECODE, which would make every run of
`abgrade` recompile the whole grader; as on a normal machine, modules are compiled once
(ENV drops the variable). Bare runs of a student's file use `python -B` instead, so that
they leave no `__pycache__/` beside the file (nor get a cached compile that the grader,
which copies the file into a fresh folder, never gets)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def run(command: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    """Wall seconds and stdout of one run; stops the benchmark on a crash (exit codes 0 and
    1, a graded failure, are results)."""
    start = time.perf_counter()
    done = subprocess.run(command, check=False, capture_output=True, text=True, cwd=PROJECT, env=env or ENV)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1) or (done.stderr.strip() and "Traceback" in done.stderr):
        sys.exit(f"{' '.join(command[:4])} ... failed:\n{done.stderr}")
    return seconds, done.stdout.strip()


def timer(command: list[str]) -> Callable[[], float]:
    """A contender for `interleave`: one run of the command, its wall seconds."""
    return lambda: run(command)[0]


def interleave(contenders: dict[str, Callable[[], float]], rounds: int, warm_up: bool = True) -> dict[str, list[float]]:
    """Each contender's seconds over `rounds` rounds; round i runs every contender once, in
    order. One unmeasured run of each first (file caches, compiled modules)."""
    if warm_up:
        for measure in contenders.values():
            measure()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, measure in contenders.items():
            times[name].append(measure())
    return times


def ratios(numerator: Sequence[float], denominator: Sequence[float]) -> list[float]:
    """Round by round: each round's two figures were taken moments apart."""
    return [a / b for a, b in zip(numerator, denominator)]


def spread(values: Sequence[float], unit: str = "", scale: float = 1.0, digits: int = 2) -> str:
    """min / median / max (seconds with two decimals by default; `scale=1000, digits=0` for ms)."""
    low, mid, high = (v * scale for v in (min(values), statistics.median(values), max(values)))
    width = 7 if digits else 6
    return f"{low:{width}.{digits}f} {mid:{width}.{digits}f} {high:{width}.{digits}f}{unit}"
