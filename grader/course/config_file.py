"""Where a course's `abgrade.yaml` is: found without importing its reader (config.py, YAML
and the labs' names), so that `abgrade grade` with no config pays nothing for it."""

from __future__ import annotations

from pathlib import Path

CONFIG_NAME = "abgrade.yaml"


def find_config(start: Path) -> Path | None:
    """The nearest abgrade.yaml in `start` or one of its parents (so that a check run from
    a subfolder of the repository still finds it)."""
    for folder in (start.resolve(), *start.resolve().parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None
