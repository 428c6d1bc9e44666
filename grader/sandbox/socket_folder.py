"""Where a notebook kernel's sockets and connection file live: a short private folder,
whatever TMPDIR is.

A Unix socket's path holds at most 107 bytes (sun_path), and ZeroMQ's `ipc` transport
appends `-<port>` to the kernel's address. Under a long TMPDIR (a macOS temp folder, a CI
runner's work path, a batch's job folder inside either) no kernel could even bind. So the
sockets never live under TMPDIR: each grader process makes one base folder in the first
short system temporary folder (`/tmp`, else `/dev/shm`, `/var/tmp`), named
`abgrade-s-<random>`, owned by the grader and mode 0700, and in it one folder per kernel
(mode 0700, handed to the kernel's uid by the caller). A socket path is then about 40 bytes.
The kernel's uid reaches its own folder and nothing else: the namespaces level binds it
into the kernel's private `/tmp` (confine.py keeps writable folders reachable), the process
level gives that uid alone traverse permission on the base folder (an ACL entry,
acl.open_way). No abstract socket: any process of the network namespace could reach one.

A base folder whose grader process is gone (killed: it could not clean up) is removed by
the next grader process that makes one; its `owner` file names the process (pid and start
time: pids are reused, start times are not)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from pathlib import Path

PREFIX = "abgrade-s-"
OWNER = "owner"
SHORT_PLACES = ("/tmp", "/dev/shm", "/var/tmp")
MAX_BASE_BYTES = 48  # a kernel's folder and socket name add about 30 more; sun_path holds 107
_lock = threading.Lock()
_base: tuple[int, Path] | None = None  # (the pid that made it, the folder)


class NoShortFolder(OSError):
    """No temporary folder with a short enough path can be written here."""


def process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (with the pid it names one
    process), or None when there is no such process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return None


def short_place() -> Path:
    """The first usable short temporary folder (TMPDIR's only when it is short itself)."""
    for place in (*SHORT_PLACES, tempfile.gettempdir()):
        if len(os.fsencode(place)) <= MAX_BASE_BYTES - 20 and os.access(place, os.W_OK | os.X_OK):
            return Path(place)
    raise NoShortFolder(
        f"no temporary folder with a path under {MAX_BASE_BYTES - 20} bytes can be written "
        f"({', '.join(SHORT_PLACES)} and TMPDIR); notebook kernels' sockets need one"
    )


def sweep_stale(place: Path) -> None:
    """Remove the base folders (of this user) whose grader process is gone."""
    for folder in place.glob(f"{PREFIX}*"):
        try:
            if folder.is_symlink() or not folder.is_dir() or folder.stat().st_uid != os.getuid():
                continue
            pid, start = (folder / OWNER).read_text().split()
        except (OSError, ValueError):
            continue  # being made right now, or not ours to judge
        if not pid.isdigit() or process_start(int(pid)) != start:
            shutil.rmtree(folder, ignore_errors=True)


def base_folder() -> Path:
    """This grader process's base folder (made on first use; a forked process makes its own)."""
    global _base
    with _lock:
        if _base is not None and _base[0] == os.getpid() and _base[1].is_dir():
            return _base[1]
        place = short_place()
        sweep_stale(place)
        folder = Path(tempfile.mkdtemp(prefix=PREFIX, dir=place))  # mode 0700, ours
        (folder / OWNER).write_text(f"{os.getpid()} {process_start(os.getpid())}\n")
        os.chmod(folder / OWNER, 0o600)
        _base = (os.getpid(), folder)
        atexit.register(_remove_own)
        return folder


def _remove_own() -> None:
    """At exit: remove this process's base folder (never a parent's, after a fork)."""
    if _base is not None and _base[0] == os.getpid():
        shutil.rmtree(_base[1], ignore_errors=True)


def kernel_folder() -> Path:
    """A fresh private folder (mode 0700) for one kernel's sockets and connection file."""
    return Path(tempfile.mkdtemp(prefix="k", dir=base_folder()))
