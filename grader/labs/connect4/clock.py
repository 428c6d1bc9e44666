"""The virtual clock of the connect4 lab's timed calls (DESIGN.md, `connect4`).

During a measured `pd_evaluate` or `best_move`, the clocks of the student's `time` module
advance by `per_call` seconds for every counted `next_states` call and by `per_round`
seconds for every top-level `evaluate` call (charged when it returns), and stand still
otherwise (observer.py). The observer reports, for each top-level `evaluate`, the counts
when it began and ended; the grader replays the same clock from them. So how deep a
time-limited deepening gets, and whether it stopped when it should, depends on the work
the search did and never on the machine's speed or load.

The default, 0.1 ms per `next_states` call, is about what the course's search costs per
call on a current machine (bench: 80 to 90 microseconds here), so the course's time
limits keep their meaning; the round cost makes every deepening advance the clock, even
one whose rounds are answered from the cache alone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

GUARD_SECONDS = 2.0  # a deepening may run this long past its time limit (on this clock) before it is stopped


@dataclass(frozen=True)
class VirtualClock:
    per_call: float = 0.0001  # seconds per counted next_states call
    per_round: float = 0.001  # seconds per top-level evaluate call

    def seconds(self, calls: int, rounds: int) -> float:
        """The clock's reading after `calls` next_states calls and `rounds` evaluate rounds."""
        return calls * self.per_call + rounds * self.per_round

    def request(self) -> dict[str, float]:
        """What the observer needs to run the clock."""
        return {"call": self.per_call, "round": self.per_round}

    @property
    def slack(self) -> float:
        """Readings closer than this are the same time: the student's code subtracts two
        readings in floating point (a `time.time()` near 1.7e9 is exact to about 2e-7 s)."""
        return min(self.per_call, self.per_round) / 100

    def described(self) -> str:
        """The clock in a sentence, for the feedback of a timed check."""
        return (
            f"(The grader's clock: during pd_evaluate and best_move, time.time() and the other clocks of the "
            f"time module advance {_ms(self.per_call)} per next_states call and {_ms(self.per_round)} per call "
            f"of evaluate from the deepening, so how deep a search gets depends on its work, not on the machine.)"
        )


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:g} ms"


def counts(mark: Any) -> tuple[int, int] | None:
    """`[next_states calls, evaluate rounds]` as the observer reports them, or None."""
    if isinstance(mark, list) and len(mark) == 2 and all(type(n) is int and n >= 0 for n in mark):
        return mark[0], mark[1]
    return None
