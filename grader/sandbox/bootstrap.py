"""The first code the student process runs (`python -I -S -u -c`, after the sources of
confine.py, probe_install.py and student_random.py, and a call of `main()`): it confines
itself as the grader's plan says (argv[3]: mounts, uid, capabilities, seccomp), reads the
setup message from the private channel, puts site-packages on the path (-S skipped the
slow .pth files), turns the shipped probe sources into modules, seeds the student's random
generators from the setup's `random_seed`, and hands over to the lab's observer. The OS
limits arrive in the setup too (so the process can start before the grader has read the
spec) and are applied before any student code. Kept stdlib-only.
"""

import json
import os
import sys


def main():
    read_fd, write_fd, plan = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
    confine(plan)  # type: ignore[name-defined]  # noqa: F821 - defined by confine.py above
    serve_confined(read_fd, write_fd)


def serve_confined(read_fd, write_fd):
    """Everything after confinement (also what a fork of the worker zygote runs, confined
    by the same steps): say so, take the setup, the rlimits, the probe, the random seed
    (set here, per grading: a fork's state is never its zygote's), and serve."""
    os.write(write_fd, b'{"op": "confined"}\n')  # the machine's part went well: any failure after is the student's
    reader = os.fdopen(read_fd, "rb")
    setup = json.loads(reader.readline())
    import resource

    for name, value in setup["rlimits"].items():  # before any student code: it can't raise them
        try:
            resource.setrlimit(getattr(resource, name), (value, value))
        except (ValueError, OSError):
            pass
    sys.path.extend(path for path in setup["site_paths"] if path not in sys.path)
    runtime, handler = _abgrade_install_probe(setup)  # type: ignore[name-defined]  # noqa: F821 - defined by probe_install.py above
    # a `breakpoint()` left in the code stops nothing while grading (PYTHONBREAKPOINT=0 would, but -I
    # ignores it): nobody can type at the debugger, which quit with BdbQuit in every case
    sys.breakpointhook = lambda *args, **kwargs: None
    _abgrade_seed_random(setup.get("random_seed"))  # type: ignore[name-defined]  # noqa: F821 - defined by student_random.py above
    channel = runtime.Channel(reader, write_fd)
    runtime.serve(channel, setup, handler)
