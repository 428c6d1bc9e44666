"""The labs abgrade grades, by name. Adding a lab means adding its adapter here."""
from __future__ import annotations

from .base import CasePlan, Judgement, Lab


def lab_names() -> list[str]:
    return sorted(name for name in _ADAPTERS if _available(name))


def _available(name: str) -> bool:
    from importlib.util import find_spec

    return find_spec(f"{__name__}.{_ADAPTERS[name][0]}") is not None


def get_lab(name: str) -> Lab:
    """The adapter of `name`; raises KeyError with the known names."""
    if name not in _ADAPTERS or not _available(name):
        raise KeyError(f"unknown lab {name!r}; known labs: {', '.join(lab_names())}")
    module_name, class_name = _ADAPTERS[name]
    module = __import__(f"{__name__}.{module_name}", fromlist=[class_name])
    return getattr(module, class_name)()


_ADAPTERS: dict[str, tuple[str, str]] = {
    "tree": ("tree", "TreeLab"),
    "tictactoe": ("tictactoe", "TicTacToeLab"),
    "negamax": ("negamax", "NegamaxLab"),
}

__all__ = ["CasePlan", "Judgement", "Lab", "get_lab", "lab_names"]
