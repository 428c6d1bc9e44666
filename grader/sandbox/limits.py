"""OS-level limits of student processes. A `.py` worker applies them to itself (its
bootstrap, before any student code: the worker can then start before the spec is read);
a notebook kernel gets them between fork and exec.

Memory is capped by resident size through a memory cgroup where the machine has one
(cgroup.py). Only where it has none does RLIMIT_AS stand in, and then never below
AS_FLOOR_MB for a notebook kernel: a current ipykernel (with debugpy) maps about 700 MB of
address space before it runs a cell, and would not start at all under a smaller cap."""

from __future__ import annotations

import os
import resource
import signal
from typing import TYPE_CHECKING, Any

from ..spec.model import Limits

_LIBC: Any = None  # ctypes' libc, loaded when a module imports die_with_grader (__getattr__)
_PR_SET_PDEATHSIG = 1
AS_FLOOR_MB = 1024
CPU_SLACK_SECONDS = 30


def _die_with_grader() -> None:
    """preexec_fn of every student process (and of batch grader processes): SIGKILL it
    when its parent dies, even if the parent died just before the request took effect."""
    parent = os.getppid()
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


if TYPE_CHECKING:
    die_with_grader = _die_with_grader
else:

    def __getattr__(name: str) -> object:
        """`die_with_grader`, with libc loaded by the import that names it: in the grader,
        before any fork (preexec code must not import), and only in the modules that
        spawn with it (a grade whose worker first_spawn.py spawned never loads ctypes)."""
        global _LIBC
        if name != "die_with_grader":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        if _LIBC is None:
            import ctypes

            _LIBC = ctypes.CDLL(None, use_errno=True)
        return _die_with_grader


def rlimits(limits: Limits, memory_cgroup: bool = False, kernel: bool = False) -> dict[str, int]:
    """The caps by resource name: CPU, file size, processes, no core files, and the
    address space: always for a `.py` worker (where it turns a hog into a MemoryError the
    student can read, the cgroup being the backstop), for a kernel only where no memory
    cgroup caps resident memory, and then never below the floor a kernel starts under."""
    mib = 1024 * 1024
    caps = {
        # a last resort per process: the session stops a tree at the submission's CPU limit
        # first (a kernel's own start-up and an interrupt's grace come on top)
        "RLIMIT_CPU": int(limits.submission_seconds) + CPU_SLACK_SECONDS,
        "RLIMIT_FSIZE": limits.file_mb * mib,
        "RLIMIT_CORE": 0,
        "RLIMIT_NPROC": limits.processes,
    }
    if not (kernel and memory_cgroup):
        caps["RLIMIT_AS"] = max(limits.memory_mb, AS_FLOOR_MB if kernel else 0) * mib
    return caps


def apply_rlimits(caps: dict[str, int]) -> None:
    """Lower soft and hard limits alike, so student code can't raise them again."""
    for name, value in caps.items():
        try:
            resource.setrlimit(getattr(resource, name), (value, value))
        except (ValueError, OSError):
            pass  # a limit the machine won't lower; the grader's own time limits still apply
