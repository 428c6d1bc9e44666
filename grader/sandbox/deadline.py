"""When a request to a student process has run too long, and which limit says so.

A limit is charged on the student process tree's own CPU time (cpu_clock.py), so that
the same submission meets the same limits on an idle and on a loaded machine. Wall-clock
time is only a backstop, for a process that doesn't compute at all (it sleeps, or waits
on something that never comes): `backstop(cpu)` = WALL_FACTOR x cpu + WALL_GRACE_SECONDS.
The factor covers a busy machine: at a load average of 10 on 2 cores (what the project's
own tests are held to) a process that computes all the time still gets about a fifth of a
core, so it reaches its CPU limit before the backstop; the constant covers what is not
computing but not hanging either (a page fault on a busy disk, a slow first import). A
sleeping process is stopped by the backstop: 60 s for a 10 s case limit, 610 s for the
whole default submission.

A `Deadline` holds several limits at once (a case's own CPU limit, what is left of the
submission's, and both backstops); the first to pass is the one named in the message."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from .cpu_clock import CpuMeter

WALL_FACTOR = 5
WALL_GRACE_SECONDS = 10.0
SHORTEST_PAUSE = 0.01  # seconds between two readings of the CPU meter, at least
LONGEST_PAUSE = 1.0
_CPUS = os.cpu_count() or 1  # the student tree may use every core at once


def backstop(cpu_seconds: float) -> float:
    """The wall-clock seconds after which a limit of `cpu_seconds` of CPU time stops a
    process that isn't computing (module docstring)."""
    return WALL_FACTOR * cpu_seconds + WALL_GRACE_SECONDS


@dataclass(frozen=True)
class Limit:
    """One limit of a request: `scope` is what it limits ("case", "submission", "load",
    "cell", "interrupt"), `clock` "cpu" or "wall", `at` the reading of that clock at which
    it has passed, `says` how a message names it ("the time limit of 10 s of CPU time per
    case")."""

    scope: str
    clock: str
    at: float
    says: str

    @property
    def backstop(self) -> bool:
        return self.clock == "wall"


class Deadline:
    """The limits of one request (or one phase of loading), on the CPU time of `meter`
    and on the wall clock."""

    def __init__(self, meter: CpuMeter | None = None) -> None:
        self.meter = meter
        self.limits: list[Limit] = []

    def cpu(self, scope: str, seconds: float, says: str, now: float | None = None) -> Deadline:
        """Add a limit of `seconds` of CPU time from now (a wall one where nothing measures
        CPU); `now`: the meter's reading of this moment, when the caller has just taken it."""
        if self.meter is None:
            return self.wall(scope, seconds, says)
        start = self.meter.seconds() if now is None else now
        self.limits.append(Limit(scope, "cpu", start + max(0.0, seconds), says))
        return self

    def wall(self, scope: str, seconds: float, says: str) -> Deadline:
        """Add a limit of `seconds` of wall-clock time from now."""
        self.limits.append(Limit(scope, "wall", time.monotonic() + max(0.0, seconds), says))
        return self

    def charged(self, scope: str, cpu_seconds: float, per: str, now: float | None = None) -> Deadline:
        """A CPU limit and its wall-clock backstop, named alike: `per` says what they limit
        ("per case", "for loading"); `now` as for cpu()."""
        self.cpu(scope, cpu_seconds, cpu_limit_text(cpu_seconds, per), now)
        return self.wall(scope, backstop(cpu_seconds), backstop_text(cpu_seconds, per))

    def including(self, other: Deadline) -> Deadline:
        """Also the limits of `other` (taken on the same meter)."""
        self.limits += other.limits
        return self

    def check(self) -> tuple[Limit | None, float]:
        """passed() and pause() from one reading of the meter: a request's send and receive
        loops ask both at every turn, and a read of a cgroup's cpu.stat costs about 14 us
        (about a tenth of a `.py` grading's CPU in its grader process went to such reads)."""
        used = self._reading()
        return self.passed(used), self.pause(used)

    def _reading(self) -> float | None:
        """The meter now, when some limit is on CPU time."""
        if self.meter is None or not any(limit.clock == "cpu" for limit in self.limits):
            return None
        return self.meter.seconds()

    def passed(self, used: float | None = None) -> Limit | None:
        """The limit that stopped the request, or None while none has passed: of the CPU
        limits passed, the tightest (a case's own, or what was left of the submission's);
        a backstop only when no CPU limit has passed (the process was not computing).
        `used`: the meter's reading (check()), else read here."""
        cpu = [limit for limit in self.limits if limit.clock == "cpu"]
        if cpu and self.meter is not None:
            used = self.meter.seconds() if used is None else used
            passed = [limit for limit in cpu if used >= limit.at]
            if passed:
                return min(passed, key=lambda limit: limit.at)
        now = time.monotonic()
        passed = [limit for limit in self.limits if limit.clock == "wall" and now >= limit.at]
        return min(passed, key=lambda limit: limit.at) if passed else None

    def pause(self, used: float | None = None) -> float:
        """How long one may wait before a limit can have passed: the time to the nearest
        wall limit, and for CPU limits what is left of them spread over every core (so a
        process that computes on one core is looked at again at half its remaining time).
        `used` as for passed()."""
        now = time.monotonic()
        waits = [limit.at - now for limit in self.limits if limit.clock == "wall"]
        cpu = [limit.at for limit in self.limits if limit.clock == "cpu"]
        if cpu and self.meter is not None:
            waits.append((min(cpu) - (self.meter.seconds() if used is None else used)) / _CPUS)
        if not waits:
            return LONGEST_PAUSE
        return min(LONGEST_PAUSE, max(SHORTEST_PAUSE, min(waits)))


def cpu_limit_text(seconds: float, per: str) -> str:
    return f"the time limit of {seconds:g} s of CPU time {per}"


def backstop_text(cpu_seconds: float, per: str) -> str:
    return (
        f"the wall-clock backstop of {backstop(cpu_seconds):g} s {per} (its limit is {cpu_seconds:g} s of CPU "
        f"time; it was not computing: asleep, or waiting for something that never came)"
    )


def wall_only(seconds: float) -> Deadline:
    """A plain wall-clock timeout (no student CPU to measure: the machine's own time)."""
    return Deadline().wall("request", seconds, f"the time limit of {seconds:g} s")
