"""The seccomp filter of student processes, compiled by libseccomp (through pyseccomp's
bindings) in the grader, once per grader process, and shipped to the student process as
raw BPF bytes that its confinement code loads before any student code (the same split as
bubblewrap's `--seccomp FD`). Nothing here is hand-assembled BPF.

Denied (EPERM): everything that changes mounts, namespaces, other processes' memory,
kernel keys and modules, BPF, perf, the clock, or the terminal's input (TIOCSTI);
`clone` with any namespace flag; `clone3` answers ENOSYS so that libc falls back to
`clone`, whose flags can be checked. Ordinary programs (threads, fork, subprocess,
numpy, Jupyter) never need these."""

from __future__ import annotations

import errno
import functools
import hashlib
import os

from .. import cache
from .first_spawn import stamp

DENIED = (
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "open_by_handle_at",
    "name_to_handle_at",
    "userfaultfd",
    "syslog",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "mount_setattr",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "lookup_dcookie",
    "vhangup",
    "iopl",
    "ioperm",
    "uselib",
    "personality",
    "fanotify_init",
    "setdomainname",
    "sethostname",
)
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
CLONE_NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x00000080)
TIOCSTI = 0x5412


LIBRARY_FOLDERS = ("/usr/lib", "/lib", "/usr/lib64", "/lib64", "/usr/local/lib")
# ldconfig rewrites it whenever a shared library is installed, upgraded or removed, and
# pyseccomp finds libseccomp through it (ctypes.util.find_library)
LINKER_CACHE = "/etc/ld.so.cache"


def _cache_key() -> str:
    """What the compiled program depends on, cheap to work out (every grade asks): the
    rules (this module's source), the machine and its kernel, the installed pyseccomp and
    the dynamic linker's cache (files' sizes and times, found without loading them:
    compiling is what the cache saves). The libseccomp files themselves are stored with
    the program and checked on the way back (`_library_stamps`)."""
    import importlib.util

    found = importlib.util.find_spec("pyseccomp")
    stamps = [stamp(name) for name in (__file__, found.origin if found and found.origin else "", LINKER_CACHE)]
    uname = os.uname()
    text = "\0".join([uname.machine, uname.release, *stamps])
    return "seccomp2-" + hashlib.sha256(text.encode()).hexdigest()[:32]


def _library_stamps() -> tuple[str, ...]:
    """Every libseccomp file in the library folders, with its size and time: listing the
    folders (thousands of files) took 4 to 8 ms, so it is done when compiling and only
    these files are looked at again on a cache hit; a library put anywhere else reaches
    pyseccomp through ldconfig, which changes `LINKER_CACHE` (part of the key)."""
    import glob

    names: list[str] = []
    for folder in LIBRARY_FOLDERS:
        names += sorted(glob.glob(f"{folder}/libseccomp.so*") + glob.glob(f"{folder}/*/libseccomp.so*"))
    return tuple(stamp(name) for name in names)


@functools.lru_cache(maxsize=1)
def filter_program() -> bytes | None:
    """The filter as BPF bytes, or None where libseccomp is not available (the isolation
    note then says so). Compiled once per machine and user (the per-user cache, keyed by
    what it depends on: importing pyseccomp and compiling take longer than a small
    grading's judging) and checked on the way back: the same libseccomp files, whole
    8-byte instructions."""
    key = _cache_key()
    stored = cache.read(key)
    if _still_valid(stored):
        return stored[1] or None
    libraries = _library_stamps()
    program = _compile()
    cache.write(key, (libraries, program or b""))
    return program


def _still_valid(stored: object) -> bool:
    """A stored (library stamps, program) pair of the right shape whose libraries are unchanged."""
    if not (isinstance(stored, tuple) and len(stored) == 2):
        return False
    libraries, program = stored
    if not (isinstance(libraries, tuple) and all(isinstance(s, str) for s in libraries)):
        return False
    if not (isinstance(program, bytes) and len(program) % 8 == 0):
        return False
    return all(stamp(s.rsplit(":", 2)[0]) == s for s in libraries)


def _compile() -> bytes | None:
    try:
        import pyseccomp as seccomp
    except (ImportError, RuntimeError, OSError):
        return None
    try:
        rules = seccomp.SyscallFilter(seccomp.ALLOW)
        for name in DENIED:
            try:
                rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
            except (OSError, ValueError, RuntimeError):
                pass  # a syscall this architecture doesn't have
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
        for flag in CLONE_NAMESPACE_FLAGS:
            rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, TIOCSTI))
        import tempfile  # only when compiling (the cache's miss)

        with tempfile.TemporaryFile() as handle:
            rules.export_bpf(handle)
            handle.seek(0)
            program = handle.read()
    except (OSError, ValueError, RuntimeError):
        return None
    return program if program and len(program) % 8 == 0 else None


def depends_on() -> list[str]:
    """The files the compiled program depends on (first_spawn.py's recipe keeps their
    stamps): pyseccomp, the dynamic linker's cache and the libseccomp files."""
    import importlib.util

    found = importlib.util.find_spec("pyseccomp")
    names = [found.origin if found and found.origin else "", LINKER_CACHE]
    return [name for name in names if name] + [s.rsplit(":", 2)[0] for s in _library_stamps()]


@functools.lru_cache(maxsize=1)
def program_hex() -> str | None:
    program = filter_program()
    return program.hex() if program else None


if __name__ == "__main__":  # pragma: no cover - a look at the compiled filter
    print(len(filter_program() or b"") // 8, "BPF instructions", os.uname().machine)
