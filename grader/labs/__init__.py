"""The labs abgrade grades, by name. Adding a lab means adding its adapter here."""
from __future__ import annotations

from .base import CasePlan, Judgement, Lab


def lab_names() -> list[str]:
    return sorted(_ADAPTERS)


def get_lab(name: str) -> Lab:
    """The adapter of `name`; raises KeyError with the known names."""
    if name not in _ADAPTERS:
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
