"""The lab kit: what every lab package builds on (grader/labs/<lab>/ imports from here)."""

from .base import Ask, CasePlan, Judge, Judgement, Lab, LabCase, Shrinkable, ShrinkFailed

__all__ = ["Ask", "CasePlan", "Judge", "Judgement", "Lab", "LabCase", "ShrinkFailed", "Shrinkable"]
