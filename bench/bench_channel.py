"""How long the grader takes to measure the nesting depth of the longest line the private
channel accepts (64 MiB, channel.MAX_LINE_BYTES), before it parses a reply: a line of
brackets 65 deep (refused) and a flat list of 16 million strings (accepted). This was a
test's time limit once (under 6 s); a test may not time anything on a shared machine, so
the figure lives here (README, Benchmarks).

    python bench/bench_channel.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader.sandbox.channel import MAX_LINE_BYTES, json_depth_exceeds  # noqa: E402

LINES = {
    "deep brackets": (b"[" * 65 + b"]" * 65) * (MAX_LINE_BYTES // 130),
    "flat strings": b"[" + b'"a",' * (MAX_LINE_BYTES // 4 - 1) + b"1]",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    for name, line in LINES.items():
        seconds = []
        for _ in range(rounds):
            started = time.perf_counter()
            json_depth_exceeds(line)
            seconds.append(time.perf_counter() - started)
        print(
            f"{name} ({len(line) / 2**20:.0f} MiB): min / median / max "
            f"{min(seconds):.3f} / {statistics.median(seconds):.3f} / {max(seconds):.3f} s"
        )


if __name__ == "__main__":
    main()
