"""Grader memory while grading a notebook whose cells print and display a flood of
output (issue 13: 2 GB displayed must keep the grader under 300 MB). Prints the grader's
peak RSS, its growth over the baseline, the time and what the load test says. One
contender and a high-water mark (ru_maxrss can't be reset within a process): there is
nothing to interleave; each run is its own process, so repeat the command for a spread.

    python bench/bench_notebook_flood.py            # 2 GB (1 GB printed, 1 GB displayed)
    python bench/bench_notebook_flood.py --mb 200
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

from grader.grading import grade_submission  # noqa: E402
from grader.labs import get_lab  # noqa: E402
from grader.spec import load_spec, spec_path  # noqa: E402
from tests.notebook_builder import notebook_from_py  # noqa: E402


def flood_cells(mb: int) -> list[str]:
    """Half printed, half displayed, 10 MB at a time."""
    chunks = max(1, mb // 20)
    return [
        f"for _ in range({chunks}):\n    print('x' * 10_000_000)",
        f"from IPython.display import display\nfor _ in range({chunks}):\n"
        "    display({'text/plain': 'y' * 10_000_000}, raw=True)",
    ]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=2000, help="megabytes of output in all")
    args = parser.parse_args()
    lab, spec = get_lab("tree"), load_spec(spec_path("tree"))
    with tempfile.TemporaryDirectory() as folder:
        path = notebook_from_py(
            PROJECT / "reference" / "solutions" / "tree.py", Path(folder) / "flood.ipynb", before=flood_cells(args.mb)
        )
        baseline = peak_mb()
        started = time.monotonic()
        report = grade_submission(path, lab, spec, seed=1)
        seconds = time.monotonic() - started
    print(f"{args.mb} MB of output: score {report.score:g}/{report.max_score:g} in {seconds:.1f} s")
    print(f"grader peak RSS {peak_mb():.0f} MB (baseline {baseline:.0f} MB, growth {peak_mb() - baseline:.0f} MB)")
    print("load test:", report.tests[0].output.replace("\n", "\n  "))


if __name__ == "__main__":
    main()
