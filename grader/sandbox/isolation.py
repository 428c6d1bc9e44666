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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_PRELUDE = r"""
set -u
mount --make-rprivate / || exit 111
n=$1; shift
while [ "$n" -gt 0 ]; do mount -t tmpfs -o ro,size=4k abgrade-hidden "$1" || exit 112; shift; n=$((n-1)); done
n=$1; shift
keep="
"
while [ "$n" -gt 0 ]; do mount --bind "$1" "$1" || exit 113; keep="$keep$1
"; shift; n=$((n-1)); done
awk '{print $5}' /proc/self/mountinfo | sort -ru | while IFS= read -r m; do
  case "$m" in /proc|/proc/*|/dev|/dev/*|/sys|/sys/*) continue;; esac
  case "$keep" in *"
$m
"*) continue;; esac
  mount -o remount,bind,ro "$m" 2>/dev/null
done
exec "$@"
"""
_UNSHARE = ["unshare", "--net", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc"]
_SHIELD = ["sh", "-c", '"$@"; exit $?', "abgrade-shield"]


@dataclass(frozen=True)
class Isolation:
    level: str
    description: str

    def wrap(self, argv: Sequence[str], writable: Sequence[Path], hidden: Sequence[Path] = ()) -> list[str]:
        """The command that runs `argv` at this level; `writable` folders stay writable,
        `hidden` ones (the project, the submissions) are covered by empty mounts."""
        if self.level != "namespaces":
            return [*_SHIELD, *argv]
        keep = [str(Path(p).resolve()) for p in writable]
        cover = _outermost([str(Path(p).resolve()) for p in hidden if Path(p).is_dir()])
        cover = [c for c in cover if not any(_inside(k, c) for k in keep)]
        return [*_UNSHARE, "sh", "-c", _PRELUDE, "abgrade-isolate",
                str(len(cover)), *cover, str(len(keep)), *keep, *argv]

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
    probe = Path(os.environ.get("TMPDIR", "/tmp"))
    try:
        done = subprocess.run(NAMESPACES.wrap(["true"], [probe]), capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return PROCESS
    return NAMESPACES if done.returncode == 0 else PROCESS
