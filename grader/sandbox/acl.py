"""File permissions for the student at the `process` level (no mount namespace to hide
things in): POSIX ACL entries, held for one grading and given back after it, so that no
grading leaves the machine weaker than it found it.

What a grading needs (isolation.plan): the grader's folders (the project, the class folder,
the output folder) get a named-group entry with no permissions, which denies the student
group even where "other" may read; the folders on the way to the interpreter that others
can't traverse (an interpreter in root's 0700 home) get traverse permission (x, not read)
for that grading's uid, and every other entry of such a folder a deny entry for it (never
for the whole group: what lies beside one grading's way may be on another's); the closed
folders on the way to the grading's own work folders (a batch keeps them in a 0700 folder
per run and per job) get traverse permission for that grading's uid only.

Those entries are borrowed, never left. Parallel gradings share many of them (the way to
the interpreter), so the machine keeps one ledger in a root-only state folder
(`STATE_DIR`): per folder, its ACL entries as they were before abgrade touched them and
which gradings (holders) want which entries now. A holder is a lock file that its grading
keeps locked (`flock`) while it runs; a grading that ends gives its entries back, and the
last holder of a folder out restores that folder's entries to what they were. A grader
killed mid-grading can't give anything back, but its lock dies with it: the next grading on
the machine (any level) sweeps the ledger, finds the dead holder and restores for it.

Every change is made under one machine-wide lock (a read-change-write of an ACL must not
interleave with another's), directly on the `system.posix_acl_access` attribute (the
kernel's own format; no `setfacl` needed), never through a symbolic link. While a grading
runs, the mask of a folder that had named entries may widen by what the grading needs
(traverse); it is put back with the rest."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import struct
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .identity import LEASE_DIR

STATE_DIR = LEASE_DIR / "acl"  # root-only: LEASE_DIR is 0700
XATTR = "system.posix_acl_access"
VERSION = 2  # POSIX_ACL_XATTR_VERSION
USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
NO_ID = 0xFFFFFFFF
_TAG_OF = {"u": USER, "g": GROUP}
Entries = dict[tuple[int, int], int]  # (tag, id) -> permission bits (r=4, w=2, x=1)
_warned: set[str] = set()


# --- the kernel's ACL format -----------------------------------------------------------


def decode(blob: bytes) -> Entries:
    """The entries of an access ACL attribute."""
    (version,) = struct.unpack_from("<I", blob)
    if version != VERSION:
        raise ValueError(f"unknown ACL version {version}")
    return {(tag, ident): perm for tag, perm, ident in struct.iter_unpack("<HHI", blob[4:])}


def encode(entries: Entries) -> bytes:
    """The attribute for `entries` (the kernel wants them sorted by tag, then id)."""
    return struct.pack("<I", VERSION) + b"".join(
        struct.pack("<HHI", tag, perm, ident) for (tag, ident), perm in sorted(entries.items())
    )


def from_mode(mode: int) -> Entries:
    """The minimal ACL a file without an ACL attribute has: its mode bits."""
    return {(USER_OBJ, NO_ID): (mode >> 6) & 7, (GROUP_OBJ, NO_ID): (mode >> 3) & 7, (OTHER, NO_ID): mode & 7}


def qualifier(text: str) -> tuple[int, int]:
    """A qualifier as the ledger writes it ("u:61003", "g:61000") as (tag, id)."""
    kind, ident = text.split(":")
    return _TAG_OF[kind], int(ident)


def named(entries: Entries) -> dict[tuple[int, int], int]:
    return {key: perm for key, perm in entries.items() if key[0] in (USER, GROUP)}


def read_entries(path: str) -> Entries:
    try:
        return decode(os.getxattr(path, XATTR, follow_symlinks=False))
    except OSError as exc:
        if exc.errno != errno.ENODATA:
            raise
    return from_mode(os.lstat(path).st_mode)


def write_entries(path: str, entries: Entries) -> None:
    """Set the access ACL; a minimal one becomes plain mode bits (the kernel drops the attribute)."""
    os.setxattr(path, XATTR, encode(entries), 0, follow_symlinks=False)


def with_changes(current: Entries, record: dict, live: Iterable[str]) -> Entries:
    """`current` with the record's qualifiers set to what the live holders want (their
    permissions ORed), or back to what they were before abgrade when nobody wants them, and
    the mask made to fit: the original mask (or, without one, the group class's union)
    widened by what is wanted; no mask when no named entry is left."""
    live = set(live)
    entries = {key: perm for key, perm in current.items() if key[0] != MASK}
    wanted: dict[tuple[int, int], int] = {}
    for holder, wants in record["wants"].items():
        if holder in live:
            for text, perm in wants.items():
                wanted[qualifier(text)] = wanted.get(qualifier(text), 0) | perm
    for text, before in record["before"].items():
        key = qualifier(text)
        if key in wanted:
            entries[key] = wanted[key]
        elif before is None:
            entries.pop(key, None)
        else:
            entries[key] = before
    others = named(entries)
    if not others:
        return entries
    base = record["mask"]
    if base is None:
        base = entries[(GROUP_OBJ, NO_ID)]
        for key, perm in others.items():
            if key not in wanted:
                base |= perm
    for perm in wanted.values():
        base |= perm
    entries[(MASK, NO_ID)] = base
    return entries


# --- the ledger, the holders and the machine-wide lock ----------------------------------


@contextmanager
def machine_lock() -> Iterator[None]:
    """One ACL change at a time on this machine: two concurrent read-change-write cycles on
    one folder would lose one of the entries (a student then can't reach its own file)."""
    LEASE_DIR.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(LEASE_DIR / "acl.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _ledger_path() -> Path:
    return STATE_DIR / "ledger.json"


def _holders_dir() -> Path:
    return STATE_DIR / "holders"


def _load() -> dict[str, dict]:
    try:
        data = json.loads(_ledger_path().read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        _warn("ledger", f"abgrade: the ACL ledger {_ledger_path()} is unreadable ({exc}); starting a new one")
        return {}
    return data.get("paths", {}) if isinstance(data, dict) else {}


def _save(paths: dict[str, dict]) -> None:
    if not paths:
        _ledger_path().unlink(missing_ok=True)
        return
    temporary = _ledger_path().with_suffix(".tmp")
    temporary.write_text(json.dumps({"version": 1, "paths": paths}, indent=1))
    os.replace(temporary, _ledger_path())


def _live_holders() -> set[str]:
    """The holders whose grading still runs (their lock file is locked); the lock files of
    the others are removed."""
    live: set[str] = set()
    try:
        names = os.listdir(_holders_dir())
    except FileNotFoundError:
        return live
    for name in names:
        path = _holders_dir() / name
        try:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            live.add(name)
        else:
            path.unlink(missing_ok=True)  # its grader died: nobody holds it any more
        finally:
            os.close(fd)
    return live


def _settle(paths: dict[str, dict], which: Iterable[str], live: set[str]) -> None:
    """Make the ACL of each folder in `which` what its record says now: the live holders'
    wants, or, when none is left, what it was before (and forget the record)."""
    for path in list(which):
        record = paths.get(path)
        if record is None:
            continue
        record["wants"] = {h: w for h, w in record["wants"].items() if h in live}
        try:
            info = os.lstat(path)
            same = (info.st_dev, info.st_ino) == (record["dev"], record["ino"]) and not stat.S_ISLNK(info.st_mode)
        except OSError:
            same = False
        if same:
            try:
                current = read_entries(path)
                target = with_changes(current, record, live)
                if target != current:
                    write_entries(path, target)
            except OSError as exc:
                _warn(path, f"abgrade: could not change the ACL of {path} ({exc.strerror}); {_FIX}")
        if not record["wants"] or not same:  # restored, or gone (our entries went with it)
            del paths[path]


def sweep() -> None:
    """Give back what gradings that died left (their lock files are no longer locked)."""
    if not _ledger_path().exists():
        return
    with machine_lock():
        paths = _load()
        live = _live_holders()
        dead = [p for p, r in paths.items() if any(h not in live for h in r["wants"]) or not r["wants"]]
        if dead:
            _settle(paths, dead, live)
            _save(paths)


def _warn(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        print(message, file=sys.stderr)


class AclHold:
    """The ACL entries one grading borrows. `release()` gives them back (the last holder of
    a folder restores it); a hold whose grader dies is given back by the next sweep."""

    def __init__(self) -> None:
        self.name = f"{os.getpid()}-{os.urandom(6).hex()}"
        self._fd: int | None = None
        self._granted: dict[str, dict[str, int]] = {}  # what this hold has already asked for

    def __enter__(self) -> AclHold:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def close_to_group(self, folders: Iterable[str], gid: int) -> None:
        """Deny the student group every access to `folders`."""
        self.grant({folder: {f"g:{gid}": 0} for folder in folders if os.path.isdir(folder)})

    def open_way_to_group(self, paths: Iterable[str], gid: int) -> None:
        """Let the group traverse the closed folders on the way to `paths` (see open_way)."""
        self.open_way(paths, (), gid, uid=None)

    def open_way(self, shared: Iterable[str], own: Iterable[str], gid: int, uid: int | None) -> None:
        """Open the way to the `shared` paths (the interpreter) to this grading's `uid`
        (to the group `gid` when there is no uid), traverse only: every other entry of such
        a folder (root's home: dot files, keys, caches) is denied to it, looked at again for
        every student process; and the way to this grading's `own` work folders to its `uid`
        alone. The folders only on the way to `own` (a batch's run and job folders) get a
        user entry and nothing else: what such a folder holds is closed on its own (work
        folders 0700, each owned by its student).

        Why the uid's entries and not the group's: an entry beside this grading's way may be
        on another grading's way, which this one can't know (another interpreter's venv in
        the same closed folder). A deny for the group refused it to that grading's students
        while this one ran: at the `namespaces` level too, whose bind mounts show the real
        folders with their ACLs; they failed to import numpy or start a kernel at random.
        And a traverse for the group would open this closed folder to the students of every
        grading, also those whose own way doesn't pass it and so deny them nothing there."""
        from .confine import closed_ancestors  # (and its ctypes) only when ACLs are set: the process level

        shared, own = list(shared), list(own)
        everything = [*shared, *own]
        wants: dict[str, dict[str, int]] = {}
        shared_closed = closed_ancestors(shared, outermost=False)
        who = f"u:{uid}" if uid is not None else f"g:{gid}"
        for folder in shared_closed:
            wants.setdefault(folder, {})[who] = 1
            try:
                entries = [os.path.join(folder, name) for name in os.listdir(folder)]
            except OSError:
                continue
            for entry in entries:
                if not os.path.islink(entry) and not any(_on_way(entry, p) for p in everything):
                    wants.setdefault(entry, {})[who] = 0
        if uid is not None:
            for folder in closed_ancestors(own, outermost=False):
                if folder not in shared_closed:
                    wants.setdefault(folder, {})[f"u:{uid}"] = 1
        self.grant(wants)

    def grant(self, wants: dict[str, dict[str, int]]) -> None:
        """Apply `wants` (folder -> qualifier "g:GID" / "u:UID" -> permission bits), saying in
        the ledger first what each entry was before."""
        new = {
            path: {q: perm for q, perm in qs.items() if self._granted.get(path, {}).get(q) != perm}
            for path, qs in wants.items()
        }
        new = {path: qs for path, qs in new.items() if qs}
        if not new:
            return
        with machine_lock():
            self._register()
            paths = _load()
            live = _live_holders() | {self.name}
            dead = [p for p, r in paths.items() if any(h not in live for h in r["wants"])]
            _settle(paths, dead, live)  # first what dead gradings left, so "before" is the machine's own
            for path, qs in new.items():
                record = self._record(paths, path)
                if record is None:
                    continue
                current = record.pop("_current")
                for text in qs:
                    if text not in record["before"]:
                        record["before"][text] = _perm_of(current, text)
                record["wants"].setdefault(self.name, {}).update(qs)
                self._granted.setdefault(path, {}).update(qs)
            _save(paths)  # the ledger says what to restore before anything changes
            _settle(paths, new, live)
            _save(paths)

    def _record(self, paths: dict[str, dict], path: str) -> dict | None:
        """The ledger's record of `path` (made now if there is none), with its current ACL
        under "_current"; None when `path` can't take an ACL here (said once)."""
        try:
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                return None
            current = read_entries(path)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                _warn(path, f"abgrade: could not read the ACL of {path} ({exc.strerror}); {_FIX}")
            return None
        record = paths.get(path)
        if record is not None and (record["dev"], record["ino"]) != (info.st_dev, info.st_ino):
            record = None  # another file now: the old one's entries went with it
        if record is None:
            mask = current.get((MASK, NO_ID))
            record = {"dev": info.st_dev, "ino": info.st_ino, "before": {}, "mask": mask, "wants": {}}
            paths[path] = record
        record["_current"] = current
        return record

    def _register(self) -> None:
        """Make this hold a holder: a lock file in the state folder, locked while it lives."""
        if self._fd is not None:
            return
        STATE_DIR.mkdir(mode=0o700, exist_ok=True)
        _holders_dir().mkdir(mode=0o700, exist_ok=True)
        fd = os.open(_holders_dir() / self.name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        """Give back every entry of this hold; the last holder of a folder restores it."""
        if self._fd is None:
            return
        with machine_lock():
            paths = _load()
            live = _live_holders() - {self.name}
            mine = [p for p, r in paths.items() if self.name in r["wants"]]
            dead = [p for p, r in paths.items() if any(h not in live for h in r["wants"])]
            _settle(paths, {*mine, *dead}, live)
            _save(paths)
            (_holders_dir() / self.name).unlink(missing_ok=True)
            fcntl.flock(self._fd, fcntl.LOCK_UN)  # also for a copy of the descriptor in a forked child
            os.close(self._fd)
            self._fd = None
            self._granted.clear()


_FIX = (
    "at the process isolation level the student user may then read what it should not, or not reach the "
    "interpreter. Grade at the namespaces level, or put Python in a world-readable prefix "
    "(e.g. PYENV_ROOT=/opt/pyenv)."
)


def _perm_of(entries: Entries, text: str) -> int | None:
    return entries.get(qualifier(text))


def _on_way(entry: str, path: str) -> bool:
    return path == entry or path.startswith(entry.rstrip("/") + "/")


def describe(path: str) -> dict[str, Any]:
    """The ledger's record of `path` (tests and diagnostics)."""
    return _load().get(path, {})


def hold_for(identity: Any) -> AclHold:
    """The hold of one grading (a StudentIdentity), given back when it releases its uid."""
    hold = identity.borrowed.get("acl")
    if hold is None:
        hold = identity.borrowed["acl"] = AclHold()
    return hold


def held_paths() -> list[str]:
    """The paths whose ACL some grading holds now (call under `machine_lock` for a stable answer)."""
    return list(_load())
