"""The environment a student process starts with, for a worker and a kernel alike. A module
of its own so that the kernel zygote (which starts its zygote with it) and the worker
(which forks from a zygote) don't import each other."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (on the way to the first spawn)

if TYPE_CHECKING:  # only for the annotation: the first spawn (first_spawn.py) imports this module
    from pathlib import Path

__all__ = ["scrubbed_env"]


def scrubbed_env(workdir: Path) -> dict[str, str]:
    """A minimal environment: nothing of the grader's leaks into the student process."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(workdir),
        "TMPDIR": str(workdir),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
        # a notebook's `!pip install x` / `%pip install x` (the student process has no network):
        # without an index pip fails at once, where it retried its connection for about 20 s
        "PIP_NO_INDEX": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # needed by some CPUs' OpenBLAS
        if key in os.environ:
            env[key] = os.environ[key]
    return env
