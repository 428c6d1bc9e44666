"""The pictures a feedback page draws, remembered by what they are drawn from.

A lab's picture (Lab.picture) is a pure function of a test's details. A batch writes one
page per student, and most students pass most cases, whose pages draw the same first
picture of each case: drawing those SVGs again for every student was about 40% of the
batch process's profiled CPU (issue 26, goal 2). So each drawing is kept under its lab's
name and the details' canonical JSON, a bounded number of them (a batch's memory must
not grow with the class); details that have no canonical JSON are drawn every time."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

KEPT = 256  # drawings: a few per case of a lab's spec, a few KB each


class Drawings:
    """A bounded memo of drawings (least recently used goes first); thread-safe."""

    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        self._drawn: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._lock = threading.Lock()

    def draw(self, lab: str, picture: Callable[[Mapping[str, Any]], str], details: Mapping[str, Any]) -> str:
        """`picture(details)`, drawn once per lab and details."""
        try:
            key = (lab, json.dumps(details, sort_keys=True))
        except (TypeError, ValueError):  # not plain JSON (or keys that can't be sorted)
            return picture(details)
        with self._lock:
            drawn = self._drawn.get(key)
            if drawn is not None:
                self._drawn.move_to_end(key)
                return drawn
        drawn = picture(details)
        with self._lock:
            self._drawn[key] = drawn
            while len(self._drawn) > self.kept:
                self._drawn.popitem(last=False)
        return drawn

    def __len__(self) -> int:
        return len(self._drawn)


DRAWINGS = Drawings()


def remembered(lab: str, picture: Callable[[Mapping[str, Any]], str]) -> Callable[[Mapping[str, Any]], str]:
    """`picture`, drawing each different details of `lab` once per process."""
    return lambda details: DRAWINGS.draw(lab, picture, details)
