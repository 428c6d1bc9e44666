"""What it costs to keep every request out of the kernel zygote's memory (issue 23, point
4): per kernel, the grader writes the request into a socket of its own and passes that
socket with the output pipe; the zygote reads only `{"id"}`, and the fork reads the request.
This times those steps, both sides in one process, on a request of a realistic size (a
confinement plan from `isolation.plan`, the kernel's arguments and environment), against
the single JSON line of before.

    python bench/bench_zygote_request.py [--rounds 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

from grader.sandbox.isolation import NAMESPACES  # noqa: E402
from grader.sandbox.worker import scrubbed_env  # noqa: E402


def realistic_request() -> dict:
    work = Path(tempfile.mkdtemp(prefix="abgrade-bench-"))
    try:
        plan = NAMESPACES.plan([work, work / "k"], [PROJECT, work.parent], None, cwd=work)
    finally:
        work.rmdir()
    return {
        "args": ["-f", str(work / "k" / "kernel.json"), "--HistoryManager.enabled=False"],
        "plan": plan,
        "env": scrubbed_env(work),
        "rlimits": {"RLIMIT_CORE": 0, "RLIMIT_FSIZE": 1 << 26},
        "cgroups": ["/sys/fs/cgroup/abgrade-000000000000/cgroup.procs"],
    }


def own_socket(request: dict, control: socket.socket, zygote: socket.socket, out_fd: int) -> None:
    mine, theirs = socket.socketpair()
    mine.sendall(json.dumps(request).encode())
    mine.close()
    socket.send_fds(control, [b'{"id": 1}\n'], [out_fd, theirs.fileno()])
    theirs.close()
    _, fds, _, _ = socket.recv_fds(zygote, 1 << 12, 4)  # the zygote: the id and two descriptors
    with socket.socket(fileno=fds[1]) as source:  # the fork: the request
        chunks = []
        while chunk := source.recv(1 << 16):
            chunks.append(chunk)
    json.loads(b"".join(chunks))
    os.close(fds[0])


def one_line(request: dict, control: socket.socket, zygote: socket.socket, out_fd: int) -> None:
    socket.send_fds(control, [json.dumps({**request, "id": 1}).encode() + b"\n"], [out_fd])
    data, fds, _, _ = socket.recv_fds(zygote, 1 << 20, 4)
    json.loads(data)
    os.close(fds[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    request = realistic_request()
    control, zygote = socket.socketpair()
    _, out_fd = os.pipe()
    print(f"request: {len(json.dumps(request)):,} bytes; {args.rounds} rounds each, interleaved in blocks of 100")
    times: dict[str, list[float]] = {"own socket (now)": [], "one line (before)": []}
    for _ in range(args.rounds // 100):
        for name, way in (("own socket (now)", own_socket), ("one line (before)", one_line)):
            started = time.perf_counter()
            for _ in range(100):
                way(request, control, zygote, out_fd)
            times[name].append((time.perf_counter() - started) / 100 * 1e6)
    for name, block in times.items():
        print(f"  {name:18} min {min(block):7.1f}  median {statistics.median(block):7.1f}  max {max(block):7.1f} us")


if __name__ == "__main__":
    main()
