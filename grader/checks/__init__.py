"""Judging: pure functions from (observation, expectation) to a `Verdict`, one module per
check kind. Nothing here runs student code; observations are plain data."""

from .verdict import Verdict

__all__ = ["Verdict"]
