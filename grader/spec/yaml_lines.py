"""YAML loading that remembers where every mapping key and list item came from.

Mappings load as `LineDict` and lists as `LineList`; both carry `.line` (1-based line of
the node) and `.lines` (line of each key or item), so validators can point at the line.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class LineDict(dict):
    line: int = 0
    lines: dict[Any, int]


class LineList(list):
    line: int = 0
    lines: list[int]


class _LineLoader(_Base):  # type: ignore[misc, valid-type]
    pass


def _mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    result = LineDict()
    result.line = node.start_mark.line + 1
    result.lines = {}
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key must be a plain value", key_node.start_mark
            ) from None
        if key in result:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        result[key] = loader.construct_object(value_node, deep=True)
        result.lines[key] = key_node.start_mark.line + 1
    return result


def _sequence(loader: _LineLoader, node: yaml.SequenceNode) -> LineList:
    result = LineList(loader.construct_object(item, deep=True) for item in node.value)
    result.line = node.start_mark.line + 1
    result.lines = [item.start_mark.line + 1 for item in node.value]
    return result


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _sequence)


def read_yaml_file(
    path: Path, shown: str, what: str, error: Callable[[str, int | None, str, str], Exception]
) -> tuple[str, Any]:
    """Read and parse a YAML file into (text, data); an unreadable file or a syntax error
    becomes `error(shown, line, field, problem)` (a SpecError or a ConfigError)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(shown, None, "file", f"cannot read the {what} ({exc.strerror})") from None
    try:
        return text, load_yaml_with_lines(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise error(shown, mark.line + 1 if mark else None, "yaml", f"invalid YAML: {problem}") from None


def load_yaml_with_lines(text: str) -> Any:
    """Parse YAML text; raises yaml.YAMLError (with a mark) on syntax errors."""
    return yaml.load(text, Loader=_LineLoader)  # noqa: S506 - SafeLoader subclass


def line_of(container: Any, key: Any = None) -> int | None:
    """Line of `key` inside `container` (or of the container itself), when known."""
    if key is not None:
        lines = getattr(container, "lines", None)
        if isinstance(lines, dict) and key in lines:
            return lines[key]
        if isinstance(lines, list) and isinstance(key, int) and 0 <= key < len(lines):
            return lines[key]
    return getattr(container, "line", None) or None
