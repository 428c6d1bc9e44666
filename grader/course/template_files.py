"""The files that abgrade hands to a course as they are (package data in templates/):
the GitHub Actions workflow and the Gradescope scripts."""

from __future__ import annotations

from pathlib import Path

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"


def template_text(name: str) -> str:
    return (TEMPLATES_DIR / name).read_text(encoding="utf-8")
