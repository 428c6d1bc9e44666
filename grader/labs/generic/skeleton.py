"""`abgrade lab new NAME`: a lab folder that works from the start (a game of sticks with
a reference, a spec and one bug replay), for an instructor to make their own."""

from __future__ import annotations

from pathlib import Path

from ...registry import lab_names
from .files import NAME, LabError

TEMPLATES = Path(__file__).resolve().parent / "templates"
TOKEN = "LABNAME"


def write_skeleton(folder: Path) -> list[Path]:
    """Write the templates into `folder`, named after it; LabError when it can't be."""
    name = folder.name
    if not NAME.fullmatch(name) or name in lab_names():
        why = (
            "an installed lab's name"
            if name in lab_names()
            else "not a lab name (a letter, then letters, digits, - or _)"
        )
        raise LabError(str(folder), None, "lab new", f"{name!r} is {why}; choose another folder name")
    if folder.exists():
        raise LabError(str(folder), None, "lab new", "already exists; give the path of a new folder")
    written = []
    for template in sorted(TEMPLATES.rglob("*.tmpl")):
        target = folder / template.relative_to(TEMPLATES).with_suffix("")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(template.read_text().replace(TOKEN, name))
        written.append(target)
    return written
