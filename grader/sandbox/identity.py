"""Who the student process runs as. When the grader is root, every grading gets its own
unprivileged uid from a pool (all in one group), so a student process holds no
capabilities, can't read the grader's files, and can't signal or read the processes and
work folders of other gradings running at the same time (they have other uids). A uid is
leased with an exclusive `flock` on a lock file in a root-only folder, so parallel graders
never share one; a killed grader's lease ends with it. Before a uid is handed out and
after it is given back, every process still running as that uid is killed and the files
it left in the shared temporary folders (`/tmp`, `/dev/shm`) are removed, so nothing of
one student reaches the next. A release that found the uid empty says so in its lease
file ("clean"), under the lock; the next lease of that uid then needn't look again
(nothing can start as a uid no one holds: only a lease hands it out, and no student can
gain another uid). A grader killed while holding one leaves "leased" there: the next
lease looks, kills and sweeps as before.

When the grader is not root there is nothing to switch to: the student process gets its
own user namespace instead, where the machine allows one (see isolation.py)."""

from __future__ import annotations

import fcntl
import functools
import os
import shutil
import signal
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .first_spawn import FIRST_UID, POOL_SIZE, STUDENT_GID  # the pool, shared with the first spawn's lease
from .first_spawn import LEASE_DIR as _LEASE_DIR

LEASE_DIR = Path(_LEASE_DIR)
SHARED_TMP = (Path("/tmp"), Path("/dev/shm"))


@dataclass
class StudentIdentity:
    """A leased uid (and the shared student gid); `release()` gives it back, with whatever
    the grading borrowed from the machine for it (`borrowed`: ACL entries, acl.AclHold)."""

    uid: int
    gid: int
    _lease_fd: int | None = None
    borrowed: dict[str, Any] = field(default_factory=dict, repr=False)
    # the student's /tmp and /dev/shm were private (the namespaces level): nothing to sweep there
    private_tmp: bool = False

    def release(self) -> None:
        leased, self._lease_fd = self._lease_fd, None
        clean = False
        try:
            if leased is not None:
                # nothing of the student runs while its way is closed again
                clean = reap(self.uid, sweep_tmp=not self.private_tmp)
            for thing in list(self.borrowed.values()):
                thing.release()
        finally:
            self.borrowed.clear()
            if leased is not None:
                _mark(leased, CLEAN if clean else LEASED)
                os.close(leased)


def grader_is_root() -> bool:
    return os.geteuid() == 0


def lease() -> StudentIdentity | None:
    """A free uid of the pool for one grading, or None when the grader is not root."""
    if not grader_is_root():
        return None
    LEASE_DIR.mkdir(mode=0o700, exist_ok=True)
    os.chmod(LEASE_DIR, 0o700)
    start = (os.getpid() * 7) % POOL_SIZE  # spread parallel graders over the pool
    for attempt in range(POOL_SIZE * 4):
        uid = FIRST_UID + (start + attempt) % POOL_SIZE
        fd = os.open(LEASE_DIR / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            if attempt % POOL_SIZE == POOL_SIZE - 1:
                time.sleep(0.5)  # every uid busy: wait for a grading to end
            continue
        if _state(fd) != CLEAN:  # its last holder was killed, or never marked it
            reap(uid)
            if processes_of(uid, zombies=True):  # the last student's zombies count against its process limit
                if attempt < POOL_SIZE:
                    os.close(fd)  # another uid, rather than wait for the machine's init to reap them
                    continue
                kill_until_gone(functools.partial(processes_of, uid, zombies=True), seconds=0.5)
        _mark(fd, LEASED)
        return StudentIdentity(uid, STUDENT_GID, fd)
    raise RuntimeError(f"no free student uid in {FIRST_UID}..{FIRST_UID + POOL_SIZE - 1}")


from .first_spawn import CLEAN, LEASED  # noqa: E402 - beside the functions that write them


def _state(fd: int) -> bytes:
    try:
        return os.pread(fd, 16, 0).strip()
    except OSError:
        return b""


def _mark(fd: int, state: bytes) -> None:
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, state + b"\n", 0)
    except OSError:
        pass


def processes_of(uid: int, zombies: bool = False) -> list[int]:
    """The pids of every live process whose real or effective uid is `uid`, and of its
    zombies with `zombies`. Killing leaves zombies out: they run nothing, hold nothing but
    their pid and can't be killed (a kernel's first process, orphaned when its `unshare`
    parent is killed, waits for the machine's init to reap it, which here took over 0.5 s:
    every lease and release spun that long). They still count against the uid's
    RLIMIT_NPROC, so a lease prefers a uid that has none (lease())."""
    live, dead = _scan(uid)
    return live + dead if zombies else live


def _scan(uid: int) -> tuple[list[int], list[int]]:
    """(live pids, zombie pids) whose real or effective uid is `uid`, in one pass over /proc."""
    live: list[int] = []
    dead: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:  # the head of the status file holds State and Uid (one read, no line objects)
            fd = os.open(f"/proc/{name}/status", os.O_RDONLY | os.O_CLOEXEC)
            try:
                head = os.read(fd, 1024)
            finally:
                os.close(fd)
            start = head.index(b"\nUid:") + 5
            real, effective = head[start : head.index(b"\n", start)].split()[:2]
            if uid in (int(real), int(effective)):
                (dead if b"\nState:\tZ" in head else live).append(int(name))
        except (OSError, ValueError):
            continue
    return live, dead


def kill_until_gone(find: Callable[[], list[int]], seconds: float = 2.0) -> None:
    """SIGKILL whatever `find` lists until it lists nothing (a process may fork while
    its siblings die), for at most `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pids = find()
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)


def reap(uid: int, sweep_tmp: bool = True) -> bool:
    """Kill what still runs as `uid` (also processes that escaped every group and cgroup)
    and remove what it left in the shared temporary folders (unless it had private ones);
    whether the uid is empty now, zombies included."""
    deadline = time.monotonic() + 0.5
    while True:
        live, dead = _scan(uid)
        if not live or time.monotonic() >= deadline:
            break
        for pid in live:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)
    if sweep_tmp:
        _sweep_tmp(uid)
    return not live and not dead


def _sweep_tmp(uid: int) -> None:
    for folder in SHARED_TMP:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_uid != uid:
                continue
            try:
                if stat.S_ISDIR(info.st_mode):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass


def hand_over(folder: Path, identity: StudentIdentity | None) -> None:
    """Make `folder` (a fresh work folder) the student's own: owned by its uid, closed to
    every other uid (mode 0700)."""
    if identity is not None:
        os.chown(folder, identity.uid, identity.gid)
        for root, dirs, files in os.walk(folder):
            for name in dirs + files:
                os.chown(os.path.join(root, name), identity.uid, identity.gid, follow_symlinks=False)
    os.chmod(folder, 0o700)
