"""Opening a session of the right kind for a submission file: above both kinds, so that
neither session module imports the other (a `.py` grading never imports Jupyter)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .session import PythonSession, Session


def open_session(submission: Path, hidden: Sequence[Path] = (), *, folder: Path | None = None) -> Session:
    """The session kind for the submission's file type (the file must exist); `hidden`:
    more folders the student process must not see; `folder`: where its work folder goes
    (default: the temporary folder)."""
    if submission.suffix == ".ipynb":
        from .notebook import NotebookSession  # Jupyter's imports only for notebooks

        return NotebookSession(submission, hidden, folder=folder)
    return PythonSession(submission, hidden, folder=folder)
