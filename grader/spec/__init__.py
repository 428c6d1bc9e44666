"""Lab specs: YAML files in `specs/` that say which cases run, which checks score how much,
who sees what, and the limits. Parsing keeps line numbers so that every spec error names
file, line and field."""
from .errors import SpecError
from .loader import load_spec, spec_path
from .model import CheckPolicy, Limits, RandomPolicy, Spec

__all__ = ["SpecError", "load_spec", "spec_path", "Spec", "Limits", "CheckPolicy", "RandomPolicy"]
