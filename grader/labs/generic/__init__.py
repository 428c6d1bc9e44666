"""Labs from a folder of three files, without a Python package: `game.py`, `reference.py`
and `spec.yaml` (plus optional `bugs/*.py`), read by `load_folder`, the loader registered
under the entry-point group `abgrade.lab_folders` (see grader.registry). README, "Write your
own lab"."""

from .adapter import FolderLab, load_folder

__all__ = ["FolderLab", "load_folder"]
