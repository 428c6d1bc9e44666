"""The diagnosis "state kept between calls" and its hint, by name: the labs name it (a
case asked again answered otherwise, grader/labs/kit/state.py) and the reports show its
hint beside the labs' own (html.py, the gradebook's pages), which may not depend on the
labs (tests/test_architecture.py), so both read it here."""

from __future__ import annotations

from collections.abc import Mapping

STATE_KEPT = "state_between_calls"
STATE_HINT = (
    "Your function keeps state between calls (a module-level variable never reset): reset it at the start of each call."
)


def with_state_hint(hints: Mapping[str, str]) -> dict[str, str]:
    """A lab's hints and this one (every lab that asks a case again can name it)."""
    return {**hints, STATE_KEPT: STATE_HINT}
