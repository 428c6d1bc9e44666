"""Where the project's data folders are (specs, exercises, the reference solutions)."""
from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_DIR = PACKAGE_DIR.parent
SPECS_DIR = PROJECT_DIR / "specs"
EXERCISES_DIR = PROJECT_DIR / "exercises"
SOLUTIONS_DIR = PROJECT_DIR / "reference" / "solutions"
DEMO_DIR = PACKAGE_DIR / "demo"
