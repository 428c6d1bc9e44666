"""YAML loading that remembers where every mapping key and list item came from.

Mappings load as `LineDict` and lists as `LineList`; both carry `.line` (1-based line of
the node), `.lines` (line of each key or item) and `.path` (where the node sits in the
file, e.g. `cases[3].expect`), so validators can point at the line and name the field
without spelling its path out themselves (`field_path`).
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
    path: str = ""


class LineList(list):
    line: int = 0
    lines: list[int]
    path: str = ""


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
    """Parse YAML text; raises yaml.YAMLError (with a mark) on syntax errors. Every node
    gets its `.path`."""
    data = yaml.load(text, Loader=_LineLoader)  # noqa: S506 - SafeLoader subclass
    _set_paths(data, "")
    return data


def _set_paths(node: Any, path: str) -> None:
    """Give every mapping and list below `node` its place in the file (iteratively: a
    spec may nest deeply)."""
    stack = [(node, path)]
    while stack:
        node, path = stack.pop()
        if isinstance(node, LineDict):
            node.path = path
            stack.extend((value, field_path(node, key)) for key, value in node.items())
        elif isinstance(node, LineList):
            node.path = path
            stack.extend((value, field_path(node, index)) for index, value in enumerate(node))


def field_path(container: Any, key: Any = None) -> str:
    """The name of `key` inside `container` as a spec error names it: `cases[3].expect.value`
    (a key of a mapping, an index of a list), from the container's own `.path`."""
    base = getattr(container, "path", "")
    if key is None:
        return base
    if isinstance(container, list):
        return f"{base}[{key}]"
    return f"{base}.{key}" if base else str(key)


def line_of(container: Any, key: Any = None) -> int | None:
    """Line of `key` inside `container` (or of the container itself), when known."""
    if key is not None:
        lines = getattr(container, "lines", None)
        if isinstance(lines, dict) and key in lines:
            return lines[key]
        if isinstance(lines, list) and isinstance(key, int) and 0 <= key < len(lines):
            return lines[key]
    return getattr(container, "line", None) or None
