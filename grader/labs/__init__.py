"""The labs abgrade grades: every lab is a package registered under the entry-point group
`abgrade.labs`, or a lab folder read by the loader registered under `abgrade.lab_folders`
(see grader.registry); `kit/` holds what they share."""

from __future__ import annotations

from ..registry import check_kinds, lab_names, open_lab
from .kit import CasePlan, Judgement, Lab


def get_lab(name: str) -> Lab:
    """A fresh instance of the lab `name`, or the lab in the folder `name` names; raises
    KeyError with the known names (a broken lab folder: a SpecError naming file and line)."""
    lab: Lab = open_lab(name)
    return lab


__all__ = ["CasePlan", "Judgement", "Lab", "check_kinds", "get_lab", "lab_names"]
