"""Grading a notebook end to end against executing the same notebook with other tools,
each in a fresh process, in interleaved rounds (every row once per round, in turn; min /
median / max):

- `abgrade grade lab.ipynb --lab tree` (kernel, cells, the observer, all cases, judging);
- nbclient alone (`NotebookClient(nb).execute()`), what every Jupyter-based grader pays;
- nbclient with the shortcuts abgrade's kernels take (grader/sandbox/kernel_worker.py: IPC
  transport, `python -m ipykernel_launcher` with IPython's history off, no cell timing,
  the kernel killed rather than shut down politely): the floor of a fresh kernel;
- `jupyter nbconvert --to notebook --execute`, when nbconvert is installed;
- otter-grader and nbgrader: looked for; they need an assignment set-up of their own (an
  autograder zip, a course database) that this bench does not build, so they are reported
  as "not installed" or "not measured", never quoted.

    python bench/bench_notebook.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(PROJECT))

from rounds import interleave, ratios, spread, timer  # noqa: E402  (bench/rounds.py)

from tests.notebook_builder import notebook_from_py  # noqa: E402

NBCLIENT_ONLY = (
    "import sys, nbformat, nbclient; nb = nbformat.read(sys.argv[1], 4); "
    "nbclient.NotebookClient(nb, kernel_name='python3', timeout=60).execute()"
)
NBCLIENT_SHORTCUTS = """
import sys, tempfile, nbformat, nbclient
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager
nb = nbformat.read(sys.argv[1], 4)
private = tempfile.mkdtemp()
km = AsyncKernelManager(kernel_name="python3", transport="ipc", ip=private + "/k", connection_file=private + "/kernel.json")
argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}", "--HistoryManager.enabled=False"]
km._kernel_spec = KernelSpec(argv=argv, display_name="Python 3", language="python")
nbclient.NotebookClient(nb, km=km, kernel_name="python3", timeout=60, allow_errors=True, record_timing=False,
                        shutdown_kernel="immediate").execute()
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", "--runs", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    notebook = notebook_from_py(PROJECT / "reference" / "solutions" / "tree.py", folder / "lab.ipynb")
    rows = {
        "abgrade grade (notebook)": [sys.executable, "-m", "grader", "grade", str(notebook), "--lab", "tree",
                                     "--seed", "1", "--quiet"],
        "nbclient execute only": [sys.executable, "-c", NBCLIENT_ONLY, str(notebook)],
        "nbclient, abgrade's shortcuts": [sys.executable, "-c", NBCLIENT_SHORTCUTS, str(notebook)],
    }  # fmt: skip
    if (
        shutil.which("jupyter")
        and subprocess.run(["jupyter", "nbconvert", "--version"], capture_output=True).returncode == 0
    ):
        rows["jupyter nbconvert --execute"] = ["jupyter", "nbconvert", "--to", "notebook", "--execute",
                                               "--output", str(folder / "out.ipynb"), str(notebook)]  # fmt: skip
    solution = str(PROJECT / "reference" / "solutions" / "tree.py")
    rows["abgrade grade (same code as .py)"] = [sys.executable, "-m", "grader", "grade", solution, "--lab", "tree",
                                                "--seed", "1", "--quiet"]  # fmt: skip
    times = interleave({name: timer(command) for name, command in rows.items()}, args.rounds)
    print(f"tree lab notebook ({notebook.stat().st_size} bytes), {args.rounds} interleaved rounds, fresh process each")
    print(f"  {'':<36}{'min':>7} {'median':>7} {'max':>7}")
    for name, seconds in times.items():
        print(f"  {name:<36}{spread(seconds, ' s')}")
    graded = times["abgrade grade (notebook)"]
    for floor in ("nbclient, abgrade's shortcuts", "nbclient execute only"):
        print(f"  abgrade over {floor:<23}{spread(ratios(graded, times[floor]), 'x')}   (per round)")
    for name, module in (("otter-grader", "otter"), ("nbgrader", "nbgrader")):
        found = importlib.util.find_spec(module) is not None
        print(f"  {name}: {'installed, not measured (needs its own assignment set-up)' if found else 'not installed'}")


if __name__ == "__main__":
    main()
