"""Diagnoses from the lab folder's bug replays (`bugs/*.py`, each a reference with one
classic mistake and a one-line `HINT`; `bugs/NAME/*.py`, one mistake written several ways,
each a replay named "NAME/WAY" and diagnosed as NAME): a bug is consistent with a call when its replay of
that call reads exactly what the student's search read, in the same order, and (where the
student returned a number, at a search call) returns the same. The pipeline keeps the bugs
consistent with every request that speaks about bugs (kit.Judgement)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...checks.show import is_number


def diagnosis(replay: str) -> str:
    """The bug a replay is a way of writing: "NAME" for bugs/NAME.py and bugs/NAME/WAY.py alike."""
    return replay.split("/", 1)[0]


def labels(observation: Mapping[str, Any]) -> list[str]:
    """The states an observation read, in order (anything but a label is dropped)."""
    reads = observation.get("reads")
    return [read for read in reads if isinstance(read, str)] if isinstance(reads, list) else []


def consistent_search(
    replays: Mapping[str, Mapping], reads: Sequence[str], returned: Any, by_value: bool = True
) -> frozenset[str]:
    """The bugs whose replay of a search call reads `reads` and (`by_value`) returns
    `returned`; a search that read nothing matches only a replay that returns the same
    number (an answer typed in). Without `by_value` (narrowed windows: a fail-hard search
    returns other values than a fail-soft replay) the reads alone decide. A replay that
    raised explains nothing."""
    found = set()
    for name, replay in replays.items():
        if replay.get("error") or labels(replay) != list(reads):
            continue
        if (by_value or not reads) and not (is_number(returned) and replay.get("returned") == returned):
            continue
        found.add(diagnosis(name))
    return frozenset(found)


def consistent_choice(replays: Mapping[str, Mapping], returned: Any) -> frozenset[str] | None:
    """The bugs whose replay of a choice returns the student's move; None when no bug
    replays the choice (the call then says nothing about bugs)."""
    if not replays:
        return None
    return frozenset(
        diagnosis(name)
        for name, replay in replays.items()
        if not replay.get("error") and replay.get("returned") == returned
    )


def intersect(*found: frozenset[str] | None) -> frozenset[str] | None:
    """What every informative (non-None) set agrees on; None when none is informative."""
    result: frozenset[str] | None = None
    for bugs in found:
        if bugs is not None:
            result = bugs if result is None else result & bugs
    return result
