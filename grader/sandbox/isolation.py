"""How far the student process is walled off, detected at run time and stated in results.

Every level runs the student as an unprivileged uid of its own when the grader is root
(identity.py), with no capabilities, no_new_privs and a seccomp filter compiled by
libseccomp (seccomp_filter.py); the confinement code (confine.py) does this in the student
process before any student code runs.

- `namespaces`: the student process also gets its own PID, mount, network, IPC and UTS
  namespaces (`unshare`): no network at all, the whole file system read-only except its own
  work folder and a private size-capped `/tmp` and `/dev/shm`, the project (grader,
  reference, specs), the submissions and every other hidden folder covered by empty tmpfs
  mounts it can't remove, a fresh /proc that shows only its own processes, and every
  process it starts dies with it.
- `process`: where namespaces are not allowed (no `unshare`, or a container that forbids
  them): its own uid, process group and session, OS limits, a fresh work folder and a
  scrubbed environment; the grader's folders are closed to the student's group with ACLs,
  and the way to the interpreter opened to it, for the grading only (acl.py: the entries
  are borrowed and given back). Without root there is no uid to switch to, and the
  student can read and write what the grader's user can.

Why not bubblewrap (measured here: 7.3 ms to start `true` against 3.1 ms for `unshare`)?
Run as root it keeps the student at kernel uid 0 inside its user namespace, which owns
every root file (owner permission bits apply without any capability: /etc/shadow, a 0700
home), and run as the student's uid it can't reach an interpreter in a closed folder.
nsjail, which can switch uids, is not packaged in Debian 12. So the same few mount(2)
calls run here, followed by the uid switch the tools can't make.

Set ABGRADE_ISOLATION=process to force the weaker level (e.g. to compare)."""

from __future__ import annotations

import functools
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import cache
from . import acl
from .first_spawn import PRIVATE_TMP_MB, UNSHARE_OPTIONS, USERNS_OPTIONS, namespace_settings
from .identity import StudentIdentity, grader_is_root

_UNSHARE = ["unshare", *UNSHARE_OPTIONS]
_USERNS = list(USERNS_OPTIONS)
_SHIELD = ["sh", "-c", '"$@"; exit $?', "abgrade-shield"]


TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing

if TYPE_CHECKING:
    from typing import Any


@functools.cache
def confine_source() -> str:
    """confine.py's source (what a kernel's wrapper and the zygote run before anything else)."""
    return (Path(__file__).parent / "confine.py").read_text()


def interpreter_paths() -> tuple[str, ...]:
    """What the student's Python must be able to read: the interpreter and site-packages,
    the module's INTERPRETER_PATHS (which a test may replace). Worked out when first
    asked: sysconfig's import and paths cost a grade whose worker was spawned first (its
    recipe holds them) about 1.5 ms for nothing."""
    found = globals().get("INTERPRETER_PATHS")
    if found is None:
        import sysconfig

        paths = sysconfig.get_paths()
        folders = (sys.base_prefix, sys.prefix, paths["purelib"], paths["platlib"], Path(sys.executable).parent)
        found = globals()["INTERPRETER_PATHS"] = tuple(dict.fromkeys(str(Path(p).resolve()) for p in folders))
    return found


def __getattr__(name: str) -> Any:
    """The module's constants that take work to make (PEP 562), made when first read:
    INTERPRETER_PATHS (interpreter_paths) and CONFINE_SOURCE (confine_source)."""
    if name == "INTERPRETER_PATHS":
        return interpreter_paths()
    if name == "CONFINE_SOURCE":
        return confine_source()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def program_hex() -> str | None:
    """seccomp_filter.program_hex(), imported when first needed (it imports hashlib and
    reads the per-user cache: a grade whose worker was spawned first has the recipe's)."""
    from .seccomp_filter import program_hex as compiled

    return compiled()


@dataclass(frozen=True)
class Isolation:
    """A level of confinement (NAMESPACES or PROCESS), as the results state it."""

    level: str
    description: str
    userns: bool = False  # namespaces made by a grader that is not root

    def prefix(self) -> list[str]:
        """What goes in front of the student's interpreter at this level."""
        if self.level == "namespaces":
            return [*_UNSHARE, *(_USERNS if self.userns else [])]
        return [] if grader_is_root() else list(_SHIELD)

    def plan(
        self,
        writable: Sequence[Path],
        hidden: Sequence[Path],
        identity: StudentIdentity | None,
        cwd: Path | None = None,
    ) -> dict:
        """What confine.py does in the student process: mounts (namespaces level), the uid,
        the seccomp filter. At the process level, as root, the ACLs are set here."""
        keep = [str(Path(p).resolve()) for p in writable]
        cover = _outermost([str(Path(p).resolve()) for p in hidden if Path(p).is_dir()])
        if self.level != "namespaces" and identity is not None:
            hold = acl.hold_for(identity)  # given back when the grading releases its uid
            hold.close_to_group(cover, identity.gid)
            # the interpreter, and its own work folders wherever they are (a batch keeps them in a
            # 0700 scratch folder): traverse only, on the closed folders on the way
            hold.open_way(interpreter_paths(), keep, identity.gid, identity.uid)
        elif identity is not None:
            acl.sweep()  # what a killed process-level grader left is given back by the next grading
        return {
            "namespace": self.level == "namespaces",
            "hidden": cover,
            "writable": keep,
            "readable": list(interpreter_paths()),
            "tmp_mb": PRIVATE_TMP_MB,
            "uid": identity.uid if identity else None,
            "gid": identity.gid if identity else None,
            "seccomp": program_hex(),
            "cwd": str(cwd) if cwd else (keep[0] if keep else None),
        }

    def wrap(self, argv: Sequence[str], plan: dict) -> list[str]:
        """The command that runs any `argv` confined by `plan` (a notebook kernel)."""
        import json

        main = confine_source() + "\nimport sys\nmain(sys.argv[1:])\n"
        return [*self.prefix(), sys.executable, "-I", "-S", "-c", main, json.dumps(plan), *argv]

    def note(self, identity: StudentIdentity | None = None, filtered: bool | None = None) -> str:
        """What results say about the level. `filtered`: whether the student's process got
        the seccomp filter, when the caller knows (a worker spawned first from its recipe's
        program); None: whether this machine compiles one."""
        who = (
            "a uid of its own, no capabilities"  # not its number: it changes from run to run
            if identity
            else "own user namespace, no capabilities"
            if self.userns
            else "the grader's own user"
        )
        if filtered is None:
            filtered = program_hex() is not None
        seccomp = "seccomp filter" if filtered else "no seccomp (libseccomp not found)"
        return f"isolation: {self.level} ({who}, {seccomp}; {self.description})"


def filter_program_available() -> bool:
    """Whether student processes get the seccomp filter here (libseccomp found)."""
    return program_hex() is not None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _outermost(folders: list[str]) -> list[str]:
    """Drop folders inside others: once the outer one is covered, the inner is gone."""
    return sorted({f for f in folders if not any(o != f and _inside(f, o) for o in folders)})


NAMESPACES = Isolation(
    "namespaces",
    "no network, read-only file system outside the work folder, private /tmp, "
    "grader and other submissions hidden, own PID namespace",
)
PROCESS = Isolation(
    "process",
    "own process group, OS limits, temporary work folder, scrubbed environment; "
    "network and world-readable files are NOT restricted on this machine",
)


@functools.lru_cache(maxsize=1)
def detect_isolation() -> Isolation:
    """The strongest level this machine allows: tried once per boot of the machine and
    user (the per-user cache, keyed by the boot, the `unshare` program and the kernel's
    namespace settings), else once per grader process. A start that fails at the level
    found forgets it (`forget_isolation`), so the next grading tries again."""
    if os.environ.get("ABGRADE_ISOLATION") == "process" or shutil.which("unshare") is None:
        return PROCESS
    candidates = [NAMESPACES] if grader_is_root() else [Isolation(NAMESPACES.level, NAMESPACES.description, True)]
    key = _detection_key()
    stored = cache.read(key)
    for level in candidates:
        if stored == level.level:
            return level
    if stored == PROCESS.level:
        return PROCESS
    found = _try(candidates)
    cache.write(key, found.level)
    return found


def _try(candidates: list[Isolation]) -> Isolation:
    import subprocess  # only when the level is tried (once per boot): 2.5 ms of a grade's imports

    for level in candidates:
        try:
            done = subprocess.run([*level.prefix(), "true"], capture_output=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return level
    return PROCESS


def _detection_key() -> str:
    """What the level found depends on: the boot, who asks, the `unshare` program and the
    kernel's settings for namespaces."""
    parts = [str(os.geteuid()), shutil.which("unshare") or "", *namespace_settings()]
    try:
        info = os.stat(parts[1])
        parts.append(f"{info.st_size}:{info.st_mtime_ns}")
    except OSError:
        pass
    import hashlib

    return "isolation-" + hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def forget_isolation() -> None:
    """A student process could not be started at the level found: find it again next time."""
    if os.environ.get("ABGRADE_ISOLATION") != "process" and shutil.which("unshare") is not None:
        cache.forget(_detection_key())
    detect_isolation.cache_clear()
