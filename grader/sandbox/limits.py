"""OS-level limits applied to the worker just before it runs student code."""
from __future__ import annotations

import resource

from ..spec.model import Limits


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
