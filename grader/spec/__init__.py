"""Lab specs: YAML files in `specs/` that say which cases run, which checks score how much,
who sees what, and the limits. Parsing keeps line numbers so that every spec error names
file, line and field.

The YAML parser is imported only when a spec is read (`load_spec`), so that `abgrade`
can start the student's worker before paying for it."""

from .errors import SpecError
from .model import CheckPolicy, Conventions, Limits, RandomPolicy, Spec

__all__ = ["SpecError", "load_spec", "spec_path", "Spec", "Conventions", "Limits", "CheckPolicy", "RandomPolicy"]


def __getattr__(name: str):
    if name in ("load_spec", "spec_path"):
        from . import loader

        return getattr(loader, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
