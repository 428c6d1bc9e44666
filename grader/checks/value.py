"""`value`: the root or position value equals the reference's."""

from __future__ import annotations

from typing import Any

from .show import is_number, show
from .verdict import Verdict


def check_value(returned: Any, expected: float, call: str) -> Verdict:
    """Exact comparison: values are leaf values passed up by min/max, never computed."""
    if is_number(returned) and returned == expected:
        return Verdict.ok(f"{call} returned {show(expected)}, as expected.")
    if returned is None:
        return Verdict.fail(
            f"{call} returned None, expected {show(expected)}.",
            hint="does every path of your function end in `return <value>`?",
        )
    if not is_number(returned):
        return Verdict.fail(f"{call} returned {show(returned)}, expected the number {show(expected)}.")
    return Verdict.fail(f"{call} returned {show(returned)}, expected {show(expected)}.")
