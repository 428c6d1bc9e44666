"""OS-level limits applied to the worker just before it runs student code."""
from __future__ import annotations

import ctypes
import resource
import signal

from ..spec.model import Limits

_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded before any fork: preexec code must not import
_PR_SET_PDEATHSIG = 1


def prepare_child(limits: Limits) -> None:
    """preexec_fn of every student process: die with the grader, then apply the limits."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    apply_rlimits(limits)


def apply_rlimits(limits: Limits) -> None:
    """Called in the child between fork and exec (preexec_fn): cap memory, CPU, files."""
    mib = 1024 * 1024
    caps = {
        resource.RLIMIT_AS: limits.memory_mb * mib,
        resource.RLIMIT_CPU: int(limits.submission_seconds) + 5,
        resource.RLIMIT_FSIZE: limits.file_mb * mib,
        resource.RLIMIT_CORE: 0,
        resource.RLIMIT_NPROC: limits.processes,
    }
    for which, value in caps.items():
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass  # a limit the machine won't lower; the wall-clock kill still applies
