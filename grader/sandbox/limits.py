"""OS-level limits of student processes. A `.py` worker applies them to itself (its
bootstrap, before any student code: the worker can then start before the spec is read);
a notebook kernel gets them between fork and exec."""
from __future__ import annotations

import ctypes
import os
import resource
import signal

from ..spec.model import Limits

_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded before any fork: preexec code must not import
_PR_SET_PDEATHSIG = 1


def die_with_grader() -> None:
    """preexec_fn of every student process (and of batch grader processes): SIGKILL it
    when its parent dies, even if the parent died just before the request took effect."""
    parent = os.getppid()
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


def rlimits(limits: Limits) -> dict[str, int]:
    """The caps by resource name: memory, CPU, file size, processes, no core files."""
    mib = 1024 * 1024
    return {
        "RLIMIT_AS": limits.memory_mb * mib,
        "RLIMIT_CPU": int(limits.submission_seconds) + 5,
        "RLIMIT_FSIZE": limits.file_mb * mib,
        "RLIMIT_CORE": 0,
        "RLIMIT_NPROC": limits.processes,
    }


def apply_rlimits(caps: dict[str, int]) -> None:
    """Lower soft and hard limits alike, so student code can't raise them again."""
    for name, value in caps.items():
        try:
            resource.setrlimit(getattr(resource, name), (value, value))
        except (ValueError, OSError):
            pass  # a limit the machine won't lower; the wall-clock kill still applies


def prepare_kernel(limits: Limits) -> None:
    """preexec_fn of a notebook kernel: die with the grader, then the caps."""
    die_with_grader()
    apply_rlimits(rlimits(limits))
