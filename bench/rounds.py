"""What the lab benchmarks share: timing one command as a user runs it, and the
min / median / max of interleaved rounds."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent


def run(command: list[str]) -> tuple[float, str]:
    """Wall seconds and stdout of one run; stops the benchmark on a crash (exit codes 0 and
    1, a graded failure, are results)."""
    start = time.perf_counter()
    done = subprocess.run(command, check=False, capture_output=True, text=True, cwd=PROJECT)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1) or (done.stderr.strip() and "Traceback" in done.stderr):
        sys.exit(f"{' '.join(command[:4])} ... failed:\n{done.stderr}")
    return seconds, done.stdout.strip()


def spread(values: list[float], unit: str = "") -> str:
    """min / median / max, seconds with two decimals."""
    return f"{min(values):7.2f} {statistics.median(values):7.2f} {max(values):7.2f}{unit}"
