"""Reading the CSV files an instructor brings (an LMS's timestamps, a roster): one way to
open them, so that both say the same thing when a file can't be read."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..lab_setup import UsageError


@contextmanager
def open_csv(path: Path, what: str) -> Iterator[csv.DictReader]:
    """A reader of `path` (UTF-8, a spreadsheet's byte-order mark allowed); `what` names
    the file in the one-line error when it can't be read."""
    try:
        handle = path.open(newline="", encoding="utf-8-sig")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    with handle:
        yield csv.DictReader(handle)
