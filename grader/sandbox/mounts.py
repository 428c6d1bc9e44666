"""File-system isolation inside a fresh mount namespace (run as the first thing in the
student process, before any student code): cover the project and the submissions with
empty read-only tmpfs mounts, keep the work folders writable, make everything else
read-only. Stdlib only: its source is prepended to the worker's bootstrap, or run as
`python -I -S -c SOURCE+"main(sys.argv[1:])" ...` in front of a notebook kernel.

Exit codes 111-113 mean the machine refused a mount: the grader's problem, not the
student's."""
import ctypes
import os

MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
SKIP = ("/proc", "/dev", "/sys")


def _mount_points():
    points = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            raw = line.split(" ")[4]
            points.append(raw.encode().decode("unicode_escape"))  # \040 is a space
    return sorted(set(points), reverse=True)


def isolate(hidden, writable):
    libc = ctypes.CDLL(None, use_errno=True)

    def mount(source, target, fstype, flags, data, code):
        if libc.mount(source, target.encode(), fstype, flags, data) != 0 and code:
            os.write(2, b"abgrade: mount failed for %s (errno %d)\n" % (target.encode(), ctypes.get_errno()))
            os._exit(code)

    mount(None, "/", None, MS_REC | MS_PRIVATE, None, 111)
    for folder in hidden:
        mount(b"abgrade-hidden", folder, b"tmpfs", MS_RDONLY, b"size=4k", 112)
    for folder in writable:
        mount(folder.encode(), folder, None, MS_BIND | MS_REC, None, 113)
    keep = set(writable)
    for point in _mount_points():
        if point in keep or any(point == s or point.startswith(s + "/") for s in SKIP):
            continue
        mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY, None, 0)


def main(argv):
    """`python -I -S -c SOURCE HIDDEN_COUNT HIDDEN... WRITABLE_COUNT WRITABLE... COMMAND...`"""
    count = int(argv[0])
    hidden, rest = argv[1:1 + count], argv[1 + count:]
    count = int(rest[0])
    writable, command = rest[1:1 + count], rest[1 + count:]
    isolate(hidden, writable)
    os.execv(command[0], command)
