"""`limits`: every case finished within its time, memory and recursion limits."""

from __future__ import annotations

from dataclasses import dataclass

from .verdict import Verdict


@dataclass(frozen=True)
class Incident:
    """A case that ran into a limit: `what` is timeout, died, recursion, memory or protocol."""

    case: str
    what: str
    message: str


def check_limits(incidents: list[Incident], cases_run: int) -> Verdict:
    if not incidents:
        return Verdict.ok(f"all {cases_run} requests finished within the time, memory and recursion limits.")
    lines = [f"{len(incidents)} request(s) ran into a limit:"]
    lines += [f"  {i.case}: {i.message}" for i in incidents[:10]]
    if len(incidents) > 10:
        lines.append(f"  ... and {len(incidents) - 10} more")
    return Verdict.fail("\n".join(lines))
