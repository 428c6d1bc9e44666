"""What several commands share: exit codes, and (from lab_setup, which course/ and batch/
use too) usage errors and loading a lab and its spec."""

from __future__ import annotations

from pathlib import Path

from ..lab_setup import SUBMISSION_SUFFIXES, UsageError, check_submission_path, load_lab, private_dirs

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_MACHINE = 0, 1, 2, 3
# raised by the sandbox when the machine, not the submission, failed (matched by name: the
# CLI starts without importing the sandbox)
MACHINE_ERRORS = ("KernelStartError", "WorkerStartError")


def check_output_file(path: Path | None, option: str) -> None:
    """An output file named on the command line goes into a folder that exists: a typo in
    the folder is a usage error (exit code 2) before any work, never a folder made silently."""
    if path is None:
        return
    if path.is_dir():
        raise UsageError(f"{option} {path}: is a folder; give a file name in it")
    folder = path.parent
    if not folder.is_dir():
        raise UsageError(f"{option} {path}: no folder {folder}; create it first or give another path")


__all__ = [
    "EXIT_FAILED",
    "EXIT_MACHINE",
    "EXIT_OK",
    "EXIT_USAGE",
    "MACHINE_ERRORS",
    "SUBMISSION_SUFFIXES",
    "check_output_file",
    "UsageError",
    "check_submission_path",
    "load_lab",
    "private_dirs",
]
