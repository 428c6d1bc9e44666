"""Random (hidden) cases: declared generator settings read from the spec's `random`
section, and the one random generator each case draws from."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...spec import Spec

OMITTED = object()  # a setting with no default: left out unless the spec gives it


@dataclass(frozen=True)
class Setting:
    """One generator setting: its default, and a test with the problem it names."""

    default: Any = OMITTED
    valid: Callable[[Any], bool] = lambda value: True
    problem: str = ""


def rng(seed: int, index: int) -> random.Random:
    """The generator of random case `index` in a run with `seed`: reproducible with
    `--seed`, independent from one case to the next."""
    return random.Random(seed * 1000 + index)


def int_range(default: list[int], low: int, high: int) -> Setting:
    """A setting [a, b] of whole numbers with low <= a <= b <= high."""
    return Setting(
        default,
        lambda v: (
            isinstance(v, (list, tuple))
            and len(v) == 2
            and all(type(x) is int for x in v)
            and low <= v[0] <= v[1] <= high
        ),
        f"must be a range [low, high] of whole numbers within {low}..{high}",
    )


def read_settings(spec: Spec, declared: Mapping[str, Setting]) -> dict[str, Any]:
    """The spec's random settings over the declared defaults; a SpecError names the first
    unknown or invalid one (`random.KEY`)."""
    assert spec.random is not None
    settings = {key: s.default for key, s in declared.items() if s.default is not OMITTED}
    for key, value in spec.random.params.items():
        if key not in declared:
            raise spec.error(
                spec.raw["random"], key, f"random.{key}", f"unknown setting; expected one of {', '.join(declared)}"
            )
        settings[key] = value
    for key, setting in declared.items():
        if key in settings and not setting.valid(settings[key]):
            raise spec.error(spec.raw["random"], key, f"random.{key}", setting.problem)
    return settings
