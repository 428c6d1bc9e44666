"""Temporary folders of a batch run. Everything the graders of a run create with
`tempfile` (work folders; kernel sockets live in a short folder of their own,
sandbox/socket_folder.py) lives under one folder per run, named after the
batch's pid and holding an `owner` file (pid and process start time). A run removes its
folder when it ends; a run that was killed can't, so every run first removes the folders
whose owner is gone."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

PREFIX = "abgrade-batch-"
OWNER = "owner"


def process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (with the pid, it names one
    process: pids are reused, start times are not); None if there is no such process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def make_run_folder() -> Path:
    """This run's temporary folder, with its owner recorded."""
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
    (folder / OWNER).write_text(f"{os.getpid()} {process_start(os.getpid())}\n")
    os.chmod(folder / OWNER, 0o600)  # a student given the way through this folder reads nothing here
    return folder


def sweep_stale(parent: Path | None = None) -> list[Path]:
    """Remove the run folders (of this user) whose owner process is gone; returns them."""
    parent = parent or Path(tempfile.gettempdir())
    removed = []
    for folder in parent.glob(f"{PREFIX}*"):
        try:
            if folder.is_symlink() or not folder.is_dir() or folder.stat().st_uid != os.getuid():
                continue
            pid, start = (folder / OWNER).read_text().split()
        except (OSError, ValueError):
            continue  # being created right now, or not ours to judge
        if not pid.isdigit() or process_start(int(pid)) != start:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed
