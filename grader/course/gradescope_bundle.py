"""`abgrade gradescope build`: the autograder zip that Gradescope runs. It holds

- `setup.sh`: installs abgrade from the bundled wheel (run once when the image is built);
- `run_autograder`: grades the submission and writes results.json (`autograder.py`);
- `abgrade-<version>-py3-none-any.whl`: grader, reference and the specs, nothing else;
- `abgrade-autograder.json`: which lab to grade, the course's spec if one was given
  (as `spec.yaml`; without it the spec inside the wheel is used), and the seed of the
  random cases, drawn once here (or given with `--seed`): every run of the bundle draws the
  same hidden cases from it. The bundle is the instructor's: the seed must not reach
  students (autograder.py never shows it; setup.sh closes the folder to them);
- `lab/`, for a lab folder (game.py, reference.py, spec.yaml, ...): the folder's files,
  graded from there (the settings name the folder).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from ..lab_setup import load_lab
from ..paths import IS_CHECKOUT, PROJECT_DIR
from ..registry import folder_of
from ..seeding import draw_seed
from ..spec_check import require_agreement
from .template_files import template_text

SETTINGS_FILE = "abgrade-autograder.json"
BUNDLED_SPEC = "spec.yaml"
BUNDLED_LAB = "lab"  # a lab folder's files, in the bundle
LAB_FILES_LIMIT = 200
SCRIPTS = ("setup.sh", "run_autograder")
# What the wheel is built from: pyproject's packages and the README it names.
WHEEL_SOURCES = ("pyproject.toml", "README.md", "grader", "reference", "specs")


class BundleError(Exception):
    """The bundle could not be built (no source to build the wheel from, pip failed)."""


def build_bundle(
    lab_name: str, output: Path, spec_file: Path | None = None, wheel: Path | None = None, seed: int | None = None
) -> Path:
    """Write the autograder zip for `lab_name` to `output`. The lab and spec are loaded and
    verified first (as `abgrade specs verify` does: every stored expectation recomputed with
    the reference), so that a broken spec or a wrong expectation fails here, not on every
    student's submission on Gradescope. `seed`: the random cases' seed (None: a fresh one,
    drawn now and kept in the bundle)."""
    lab, spec = load_lab(lab_name, spec_file)
    require_agreement(lab, spec, "no bundle was written")
    folder = folder_of(lab_name)
    settings = {
        "lab": lab.name,
        "spec": BUNDLED_SPEC if spec_file else None,
        "seed": draw_seed() if seed is None else seed,
    }
    if folder is not None:
        settings["folder"] = BUNDLED_LAB
    with tempfile.TemporaryDirectory(prefix="abgrade-bundle-") as temp:
        wheel = wheel or build_wheel(PROJECT_DIR if IS_CHECKOUT else None, Path(temp))
        output.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(output, "w", zipfile.ZIP_DEFLATED) as bundle:
            for script in SCRIPTS:
                _add(bundle, script, template_text(script).encode(), executable=True)
            _add(bundle, wheel.name, wheel.read_bytes())
            _add(bundle, SETTINGS_FILE, (json.dumps(settings, indent=2) + "\n").encode())
            if spec_file:
                _add(bundle, BUNDLED_SPEC, spec_file.read_bytes())
            for name, data in _folder_files(folder) if folder is not None else ():
                _add(bundle, f"{BUNDLED_LAB}/{name}", data)
    return output


def _folder_files(folder: Path) -> list[tuple[str, bytes]]:
    """A lab folder's files (no caches, no hidden files), by their path in it."""
    files = sorted(
        path
        for path in folder.rglob("*")
        if path.is_file()
        and not any(part.startswith(".") or part == "__pycache__" for part in path.relative_to(folder).parts)
    )
    if len(files) > LAB_FILES_LIMIT:
        raise BundleError(f"{folder}: holds {len(files)} files; a lab folder to bundle holds at most {LAB_FILES_LIMIT}")
    return [(path.relative_to(folder).as_posix(), path.read_bytes()) for path in files]


def _add(bundle: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # the same inputs (and seed) give the same zip
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (0o100755 if executable else 0o100644) << 16
    bundle.writestr(info, data)


def build_wheel(source: Path | None, out_dir: Path) -> Path:
    """Build abgrade's wheel from a source checkout with pip, offline. The sources are
    copied to a temporary folder first: setuptools leaves build/ and *.egg-info beside the
    sources, and a stale build/ would smuggle deleted modules into the wheel."""
    if source is None:
        raise BundleError(
            "this abgrade is installed without its sources, so it cannot build its wheel: "
            "pass --wheel FILE, or run from a checkout of the abgrade repository"
        )
    with tempfile.TemporaryDirectory(prefix="abgrade-wheel-") as temp:
        copy = Path(temp) / "abgrade"
        copy.mkdir()
        for name in WHEEL_SOURCES:
            if (source / name).is_dir():
                shutil.copytree(source / name, copy / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copyfile(source / name, copy / name)
        built = Path(temp) / "wheel"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "--quiet",
                str(copy),
                "-w",
                str(built),
            ],
            capture_output=True,
            text=True,
        )
        wheels = sorted(built.glob("abgrade-*.whl"))
        if done.returncode != 0 or len(wheels) != 1:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            hint = (
                " (setuptools older than 70.1 needs the `wheel` package: pip install wheel)"
                if "bdist_wheel" in tail
                else ""
            )
            raise BundleError(f"pip could not build abgrade's wheel{hint}:\n{tail}")
        out_dir.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copy2(wheels[0], out_dir / wheels[0].name))
