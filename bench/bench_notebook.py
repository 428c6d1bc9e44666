"""Grading a notebook end to end against executing the same notebook with other tools,
each in a fresh process (median of N runs):

- `abgrade grade lab.ipynb --lab tree` (kernel, cells, the observer, all cases, judging);
- nbclient alone (`NotebookClient(nb).execute()`), the floor every Jupyter-based grader pays;
- `jupyter nbconvert --to notebook --execute`, when nbconvert is installed;
- `otter run` and nbgrader `autograde` are not run here (they need their own assignment
  set-ups); the issue quotes 2.7 s (nbgrader) and 5.5 s (otter) on this machine.

    python bench/bench_notebook.py [--runs 5]
"""

from __future__ import annotations

import argparse
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

from tests.notebook_builder import notebook_from_py  # noqa: E402

NBCLIENT_ONLY = (
    "import sys, nbformat, nbclient; nb = nbformat.read(sys.argv[1], 4); "
    "nbclient.NotebookClient(nb, kernel_name='python3', timeout=60).execute()"
)


def timed(command: list[str], runs: int) -> float:
    subprocess.run(command, capture_output=True, check=False)  # warm-up (disk caches)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{command[:3]} failed: {done.stderr.decode()[-500:]}")
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    notebook = notebook_from_py(PROJECT / "reference" / "solutions" / "tree.py", folder / "lab.ipynb")
    rows = [
        (
            "abgrade grade (notebook)",
            [sys.executable, "-m", "grader", "grade", str(notebook), "--lab", "tree", "--seed", "1", "--quiet"],
        ),
        ("nbclient execute only", [sys.executable, "-c", NBCLIENT_ONLY, str(notebook)]),
    ]
    if (
        shutil.which("jupyter")
        and subprocess.run(["jupyter", "nbconvert", "--version"], capture_output=True).returncode == 0
    ):
        rows.append(
            (
                "jupyter nbconvert --execute",
                [
                    "jupyter",
                    "nbconvert",
                    "--to",
                    "notebook",
                    "--execute",
                    "--output",
                    str(folder / "out.ipynb"),
                    str(notebook),
                ],
            )
        )
    rows.append(
        (
            "abgrade grade (same code as .py)",
            [
                sys.executable,
                "-m",
                "grader",
                "grade",
                str(PROJECT / "reference" / "solutions" / "tree.py"),
                "--lab",
                "tree",
                "--seed",
                "1",
                "--quiet",
            ],
        )
    )
    print(f"tree lab notebook ({notebook.stat().st_size} bytes), median of {args.runs} runs, fresh process each")
    for name, command in rows:
        print(f"  {name:<34}{timed(command, args.runs):7.2f} s")


if __name__ == "__main__":
    main()
