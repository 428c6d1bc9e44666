"""The file names of an LMS's "download all submissions", recognised without
`--id-pattern`: which part of a name is the student's id, which the student's name, and
which orders one student's resubmissions.

- Canvas: `<sortable name>[_late]_<user id>_<submission id>_<file>`, e.g.
  `smithjohn_10001_65001_lab-1.py`; the user id is the Canvas ID of the gradebook export and
  of the REST API, the submission id grows with each resubmission.
- Moodle: `<Full Name>_<participant id>_assignsubmission_file_<file>` (or a folder
  `<Full Name>_<participant id>_assignsubmission_file` per student); the participant id is
  Moodle's per-assignment identifier, so rosters are matched by the full name as well.
- Blackboard Learn: `<assignment>_<username>_attempt_<yyyy-mm-dd-hh-mm-ss>_<file>`, beside a
  `..._attempt_<time>.txt` receipt; the username is what the Grade Center matches on, and the
  attempt time orders resubmissions. The part before it is the assignment's name, not the
  student's, so no name is read.

A layout is taken when it names most of the folder's submission-like entries (a stray
file doesn't hide a download; an entry it misses is then skipped and says so)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..grading import SUPPORTED_SUFFIXES

_NOT_ENTRIES = {"__pycache__", "__MACOSX", "Thumbs.db", "desktop.ini"}


@dataclass(frozen=True)
class DownloadLayout:
    lms: str
    pattern: str  # an --id-pattern: group `id`; optional groups `name` and `order`
    id_means: str  # what the id is, for the line the batch prints

    def compiled(self) -> re.Pattern:
        return re.compile(self.pattern)


LAYOUTS = (
    DownloadLayout("Canvas", r"_(?:late_)?(?P<id>\d+)_(?P<order>\d+)_", "the Canvas user ID"),
    DownloadLayout("Moodle", r"_(?P<id>\d+)_assignsubmission_", "Moodle's participant id (rosters match on the name)"),
    DownloadLayout(
        "Blackboard",
        r"^(?P<name>)(?:.*)_(?P<id>[^_]+)_attempt_(?P<order>\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d)",
        "the Blackboard username",
    ),
)


def detect_layout(folder: Path) -> DownloadLayout | None:
    """The LMS layout that names more than half of `folder`'s entries that may be a
    student's (files with a submission suffix, and folders); None when none does."""
    names = [
        entry.name
        for entry in folder.iterdir()
        if not entry.name.startswith(".")
        and entry.name not in _NOT_ENTRIES
        and (entry.suffix in SUPPORTED_SUFFIXES or (entry.is_dir() and not entry.is_symlink()))
    ]
    if not names:
        return None
    for layout in LAYOUTS:
        pattern = layout.compiled()
        if 2 * sum(1 for name in names if pattern.search(name)) > len(names):
            return layout
    return None
