"""The lab kit: what every lab package builds on (grader/labs/<lab>/ imports from here)."""

from .base import CasePlan, Judge, Judgement, Lab, LabCase

__all__ = ["CasePlan", "Judge", "Judgement", "Lab", "LabCase"]
