"""YAML loading that remembers where every mapping key and list item came from.

Mappings load as `LineDict` and lists as `LineList`; both carry `.line` (1-based line of
the node), `.lines` (line of each key or item) and `.path` (where the node sits in the
file, e.g. `cases[3].expect`), so validators can point at the line and name the field
without spelling its path out themselves (`field_path`).

A parsed file is kept in the per-user cache (grader/cache.py) under the hash of its text
(and of the YAML library's version), so a spec read again, in this process or the next,
is not parsed again and PyYAML is not even imported: a changed file is another text,
hence another entry.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import cache
from ..digests import sha256


class LineDict(dict):
    line: int = 0
    lines: dict[Any, int]
    path: str = ""


class LineList(list):
    line: int = 0
    lines: list[int]
    path: str = ""


@functools.cache
def _line_loader() -> type:
    """PyYAML's (C) safe loader, taught to build LineDicts and LineLists; imported on the
    first parse, not before."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class LineLoader(base):  # type: ignore[misc, valid-type]
        pass

    def mapping(loader: Any, node: yaml.MappingNode) -> LineDict:
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

    def sequence(loader: Any, node: yaml.SequenceNode) -> LineList:
        result = LineList(loader.construct_object(item, deep=True) for item in node.value)
        result.line = node.start_mark.line + 1
        result.lines = [item.start_mark.line + 1 for item in node.value]
        return result

    LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, sequence)
    return LineLoader


def read_yaml_file(
    path: Path, shown: str, what: str, error: Callable[[str, int | None, str, str], Exception]
) -> tuple[str, Any]:
    """Read and parse a YAML file into (text, data); an unreadable file or a syntax error
    becomes `error(shown, line, field, problem)` (a SpecError or a ConfigError)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(shown, None, "file", f"cannot read the {what} ({exc.strerror})") from None
    cached = _from_cache(text)
    if cached is not None:
        return text, cached
    import yaml

    try:
        data = load_yaml_with_lines(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise error(shown, mark.line + 1 if mark else None, "yaml", f"invalid YAML: {problem}") from None
    _to_cache(text, data)
    return text, data


def load_yaml_with_lines(text: str) -> Any:
    """Parse YAML text; raises yaml.YAMLError (with a mark) on syntax errors. Every node
    gets its `.path`."""
    import yaml

    data = yaml.load(text, Loader=_line_loader())  # noqa: S506 - SafeLoader subclass
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


# The cache's encoding: plain data marshal can hold, every LineDict and LineList with its
# lines and place. YAML's safe loader makes nothing else but scalars (a date, bytes or a
# set, which have no such encoding here, leave the file uncached).
_SCALARS = (str, int, float, bool, type(None))


class _Uncachable(Exception):
    pass


def _encode(node: Any) -> Any:
    if isinstance(node, LineDict):
        return ("d", node.line, node.path, [(key, _encode(value), node.lines[key]) for key, value in node.items()])
    if isinstance(node, LineList):
        return ("l", node.line, node.path, [_encode(item) for item in node], list(node.lines))
    if isinstance(node, _SCALARS):
        return node
    raise _Uncachable


def _decode(node: Any) -> Any:
    if not isinstance(node, tuple):
        if isinstance(node, _SCALARS):
            return node
        raise _Uncachable
    if node[0] == "d":
        result = LineDict()
        _, result.line, result.path, items = node
        result.lines = {}
        for key, value, line in items:
            result[key] = _decode(value)
            result.lines[key] = line
        return result
    if node[0] == "l":
        listed = LineList(_decode(item) for item in node[3])
        _, listed.line, listed.path, _, listed.lines = node
        return listed
    raise _Uncachable


@functools.cache
def _parser_version() -> str:
    """What else a parse depends on: PyYAML's installed version (its files' sizes and
    times, found without importing it) and this module's own source."""
    import importlib.util
    import os

    found = importlib.util.find_spec("yaml")
    parts = [__file__, *((found.submodule_search_locations or []) if found else [])]
    stamps = []
    for part in parts:
        try:
            info = os.stat(part)
            stamps.append(f"{part}:{info.st_size}:{info.st_mtime_ns}")
        except OSError:
            stamps.append(part)
    return "|".join(stamps)


def _key(text: str) -> str:
    return "yaml-" + sha256(f"{_parser_version()}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _from_cache(text: str) -> Any:
    stored = cache.read(_key(text))
    if stored is None:
        return None
    try:
        return _decode(stored)
    except (_Uncachable, ValueError, TypeError, KeyError, IndexError, RecursionError):
        return None


def _to_cache(text: str, data: Any) -> None:
    try:
        cache.write(_key(text), _encode(data))
    except (_Uncachable, RecursionError):
        pass
