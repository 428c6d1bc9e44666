"""What several commands share: exit codes, and (from lab_setup, which course/ and batch/
use too) usage errors and loading a lab and its spec."""

from __future__ import annotations

from ..lab_setup import SUBMISSION_SUFFIXES, UsageError, check_submission_path, load_lab, private_dirs

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_MACHINE = 0, 1, 2, 3
# raised by the sandbox when the machine, not the submission, failed (matched by name: the
# CLI starts without importing the sandbox)
MACHINE_ERRORS = ("KernelStartError", "WorkerStartError")

__all__ = [
    "EXIT_FAILED",
    "EXIT_MACHINE",
    "EXIT_OK",
    "EXIT_USAGE",
    "MACHINE_ERRORS",
    "SUBMISSION_SUFFIXES",
    "UsageError",
    "check_submission_path",
    "load_lab",
    "private_dirs",
]
