"""How far the student process is walled off, detected at run time and stated in results.

- `namespaces`: the worker runs under `unshare` in its own PID, mount and network
  namespaces: no network at all, the whole file system read-only except its own work
  folder, the project (grader, reference, specs) and the submissions folder hidden under
  empty tmpfs mounts, a fresh /proc that shows only its own processes, and every process
  it starts dies with it.
- `process`: where namespaces are not allowed (no `unshare`, or a container that forbids
  them): its own process group and session, OS limits, a fresh temporary work folder and
  a scrubbed environment, with a shell in between so that signalling its parent hits the
  shell, not the grader. It can read and write what the grader's user can.

Set ABGRADE_ISOLATION=process to force the weaker level (e.g. to compare).
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MOUNTS_SOURCE = (Path(__file__).parent / "mounts.py").read_text()
_MOUNTER = MOUNTS_SOURCE + "\nimport sys\nmain(sys.argv[1:])\n"
_UNSHARE = ["unshare", "--net", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc"]
_SHIELD = ["sh", "-c", '"$@"; exit $?', "abgrade-shield"]


@dataclass(frozen=True)
class Isolation:
    level: str
    description: str

    def prefix(self) -> list[str]:
        """What goes in front of the student process's command at this level."""
        return list(_UNSHARE) if self.level == "namespaces" else list(_SHIELD)

    def mount_plan(self, writable: Sequence[Path], hidden: Sequence[Path] = ()) -> dict[str, list[str]]:
        """The folders to cover and to keep writable (empty below the namespaces level)."""
        if self.level != "namespaces":
            return {"hidden": [], "writable": []}
        keep = [str(Path(p).resolve()) for p in writable]
        cover = _outermost([str(Path(p).resolve()) for p in hidden if Path(p).is_dir()])
        return {"hidden": [c for c in cover if not any(_inside(k, c) for k in keep)], "writable": keep}

    def wrap(self, argv: Sequence[str], writable: Sequence[Path], hidden: Sequence[Path] = ()) -> list[str]:
        """The command that runs any `argv` at this level; `writable` folders stay
        writable, `hidden` ones (the project, the submissions) are covered by empty mounts."""
        if self.level != "namespaces":
            return [*_SHIELD, *argv]
        plan = self.mount_plan(writable, hidden)
        return [*_UNSHARE, sys.executable, "-I", "-S", "-c", _MOUNTER, str(len(plan["hidden"])), *plan["hidden"],
                str(len(plan["writable"])), *plan["writable"], *argv]

    @property
    def note(self) -> str:
        return f"isolation: {self.level} ({self.description})"


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _outermost(folders: list[str]) -> list[str]:
    """Drop folders inside others: once the outer one is covered, the inner is gone."""
    return sorted({f for f in folders if not any(o != f and _inside(f, o) for o in folders)})


NAMESPACES = Isolation("namespaces", "no network, read-only file system outside the work folder, "
                                     "grader and other submissions hidden, own PID namespace")
PROCESS = Isolation("process", "own process group, OS limits, temporary work folder, scrubbed environment; "
                               "file system and network are NOT restricted on this machine")


@functools.lru_cache(maxsize=1)
def detect_isolation() -> Isolation:
    """The strongest level this machine allows, tried once per grader process."""
    if os.environ.get("ABGRADE_ISOLATION") == "process" or shutil.which("unshare") is None:
        return PROCESS
    try:
        done = subprocess.run([*_UNSHARE, "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return PROCESS
    return NAMESPACES if done.returncode == 0 else PROCESS
