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


# The class the batch benches grade: a fixed list, not the fixture folder's contents. The
# folder grows every round (s34's red team added a search in a process pool, threads and a
# deepening wrapper), and a class that changes with it made two rounds' figures measure two
# classes (the s34 round's first run of bench_batch.py halved its rate against s33 for that
# reason alone). These are the tree fixtures as they were when goal 2 was first measured this
# way (commit 49fae0b), after the course's own solution.
TREE_CLASS_CORRECT = (
    "correct_fail_hard.py",
    "correct_generator_class.py",
    "correct_get_lookups.py",
    "correct_iterative.py",
    "correct_main_guard.py",
    "correct_max_min_helpers.py",
    "correct_negamax.py",
    "correct_numpy_defaults.py",
    "correct_seed_style.py",
    "correct_shadows_builtins.py",
    "correct_try_except.py",
    "correct_v_from_alpha.py",
)
TREE_CLASS_BUGGY = (
    "bug_alpha_never_updated.py",
    "bug_beta_never_updated.py",
    "bug_bound_updates_swapped.py",
    "bug_bounds_midpoint.py",
    "bug_fake_infinity.py",
    "bug_hardcoded_answer.py",
    "bug_late_cutoff.py",
    "bug_lru_cached_search.py",
    "bug_min_at_root.py",
    "bug_no_alternation.py",
    "bug_no_pruning.py",
    "bug_reads_children_early.py",
    "bug_returns_none.py",
    "bug_reversed_children.py",
    "bug_strict_cutoff.py",
    "bug_window_not_passed.py",
    "bug_window_swapped.py",
    "bug_zero_initial_value.py",
)


def tree_class(correct: bool = True, buggy: bool = True) -> list[Path]:
    """The course's solution, then the fixed correct and buggy files asked for."""
    folder = PROJECT / "tests" / "fixtures" / "tree"
    names = (TREE_CLASS_CORRECT if correct else ()) + (TREE_CLASS_BUGGY if buggy else ())
    return [PROJECT / "reference" / "solutions" / "tree.py", *(folder / name for name in names)]
