"""Where the project's data folders are (specs, exercises, the reference solutions).

abgrade runs from two layouts. In a source checkout (editable install, tests, CI) the
top-level `specs/` is the source of truth. In an installed wheel (Gradescope, a plain
`pip install`) there is no checkout: pyproject maps `specs/` into the package as
`grader/specs/`, and the paths below fall back to that copy.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
_CHECKOUT_DIR = PACKAGE_DIR.parent
IS_CHECKOUT = (_CHECKOUT_DIR / "pyproject.toml").is_file() and (_CHECKOUT_DIR / "specs").is_dir()

# The folder that holds the grader, its specs and the reference; the sandbox hides it from
# student code. Installed, the package's parent is site-packages, which student code needs
# (numpy, ipykernel), so only the package itself is hidden there.
PROJECT_DIR = _CHECKOUT_DIR if IS_CHECKOUT else PACKAGE_DIR
SPECS_DIR = _CHECKOUT_DIR / "specs" if IS_CHECKOUT else PACKAGE_DIR / "specs"
EXERCISES_DIR = _CHECKOUT_DIR / "exercises"  # only in a checkout: generated, not installed
SOLUTIONS_DIR = _CHECKOUT_DIR / "reference" / "solutions"  # `reference` is installed beside `grader`
# What the sandbox covers in the student process: the whole checkout, or, installed, the
# two packages (their parent, site-packages, stays visible for numpy and ipykernel).
PRIVATE_DIRS = (_CHECKOUT_DIR,) if IS_CHECKOUT else (PACKAGE_DIR, _CHECKOUT_DIR / "reference")
