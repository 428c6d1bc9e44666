"""The labs abgrade grades: every lab is a package registered under the entry-point group
`abgrade.labs` (see grader.registry); `kit/` holds what they share."""

from __future__ import annotations

from ..registry import check_kinds, lab_class, lab_names
from .kit import CasePlan, Judgement, Lab


def get_lab(name: str) -> Lab:
    """A fresh instance of the lab `name`; raises KeyError with the known names."""
    return lab_class(name)()


__all__ = ["CasePlan", "Judgement", "Lab", "check_kinds", "get_lab", "lab_names"]
