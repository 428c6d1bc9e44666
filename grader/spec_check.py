"""Checking a spec's stored expectations against the reference before grading with it
(`grade`, `batch`, `gradescope build`): a hand-edited spec with a wrong expectation would
otherwise fail every correct student. Verifying takes from a second (tree) to twenty
(agents), so a spec that passed is remembered in the user's cache folder
(`$XDG_CACHE_HOME/abgrade/verified-specs/`, else `~/.cache/...`), keyed by the lab, the
spec's digest and abgrade's version: a later `grade` with the same spec skips it. Only
passes are remembered; a cache that can't be written just means verifying again."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from .digests import sha256
from .lab_setup import UsageError
from .version import abgrade_version

if TYPE_CHECKING:
    from .labs import Lab
    from .spec import Spec

CACHE_VARIABLE = "XDG_CACHE_HOME"
_CASE_INDEX = re.compile(r"\bcases\[(\d+)\]")


class SpecDisagrees(UsageError):
    """A stored expectation of the spec is not what the reference computes (exit code 2)."""


def cache_folder() -> Path:
    """Where passes are remembered: `$XDG_CACHE_HOME/abgrade`, else `~/.cache/abgrade`."""
    base = os.environ.get(CACHE_VARIABLE) or str(Path.home() / ".cache")
    return Path(base) / "abgrade" / "verified-specs"


def cache_key(lab: Lab, spec: Spec) -> str:
    text = f"{lab.name}\0{spec.digest}\0{abgrade_version()}"
    return sha256(text.encode()).hexdigest()[:32]


def disagreements(lab: Lab, spec: Spec) -> list[str]:
    """Each stored expectation the reference disagrees with, one line each: the spec file,
    line and field, and the case's name."""
    problems = lab.verify(spec)
    cases = spec.raw.get("cases") if hasattr(spec.raw, "get") else None
    named = []
    for problem in problems:
        match = _CASE_INDEX.search(problem)
        name = None
        if match and isinstance(cases, list) and int(match.group(1)) < len(cases):
            case = cases[int(match.group(1))]
            name = case.get("name") if hasattr(case, "get") else None
        named.append(f"{problem} (case {name!r})" if isinstance(name, str) else problem)
    return named


def require_agreement(lab: Lab, spec: Spec, consequence: str) -> None:
    """Raise SpecDisagrees (one line per problem) unless the reference computes every stored
    expectation of `spec`; `consequence` says what was not done."""
    problems = disagreements(lab, spec)
    if problems:
        raise SpecDisagrees(
            f"{spec.path}: {len(problems)} stored expectation(s) disagree with the reference; fix the spec "
            f"(see `abgrade specs verify --spec FILE`), {consequence}:\n  " + "\n  ".join(problems)
        )


def verify_once(lab: Lab, spec: Spec, consequence: str = "nothing was graded") -> bool:
    """require_agreement, skipped when this lab, spec and abgrade passed before on this
    account; True when it was verified now (False: remembered)."""
    marker = cache_folder() / cache_key(lab, spec)
    if marker.is_file():
        return False
    require_agreement(lab, spec, consequence)
    _remember(marker, f"{lab.name} {spec.path} {spec.digest} abgrade {abgrade_version()}\n")
    return True


def _remember(marker: Path, text: str) -> None:
    """Write the marker atomically (parallel graders may race); give up quietly."""
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        import tempfile  # only when the marker is written (once per spec text): not on a grade's path

        handle, temp = tempfile.mkstemp(dir=marker.parent, prefix=".tmp-")
        with os.fdopen(handle, "w") as out:
            out.write(text)
        os.replace(temp, marker)
    except OSError:
        pass
