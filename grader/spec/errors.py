"""The one error type a broken spec raises."""

from __future__ import annotations


class SpecError(Exception):
    """A spec problem, rendered as `file:line: field: problem` so a course author can fix it."""

    def __init__(self, file: str, line: int | None, field: str, problem: str) -> None:
        self.file, self.line, self.field, self.problem = file, line, field, problem
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {field}: {problem}")
