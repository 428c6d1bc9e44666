"""The one boundary for text that comes from the student side (returned reprs, exception
types and messages, traceback frames, printed output, notebook cell notes, file names).

Everything such text may hold is made safe *once*, on entry into the grader, so every
writer (terminal, HTML, SVG, JSON, JUnit, Markdown) receives plain, printable, valid
Unicode of bounded length and only has to escape for its own format:

- lone surrogates (a `__repr__` returning "\\ud800") become U+FFFD: they can't be encoded
  as UTF-8 and would crash any file or terminal write;
- control characters become visible: C0 ones as their Unicode control pictures (ESC as
  "␛", so an ANSI sequence shows as "␛[31m" and can't paint a fake summary), DEL as "␡",
  C1 ones (8-bit CSI, ...) and bidirectional overrides as `\\x9b` / `\\u202e`; newlines
  and tabs are kept where the text is multi-line (output, messages, reprs);
- the length is capped with a visible "… [N more characters]" marker.
"""

from __future__ import annotations

import re
from typing import Any

# limits, in characters, by what the text is
NAME_CHARS = 200  # exception type names, file names, function names, node names
LINE_CHARS = 500  # one source line of a traceback, a notebook cell note
MESSAGE_CHARS = 2000  # exception messages, reprs
OUTPUT_CHARS = 20_000  # what the student's code printed

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# anything that needs work: controls (but \n \t, decided per call), DEL, C1, surrogates, bidi
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff{_BIDI}]")
_UNSAFE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f\ud800-\udfff{_BIDI}]")
DEPTH = 24  # deeper observation data is not something an honest observer sends


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ ... ␟ (ESC -> ␛, newline -> ␊ on one line)
    if code == 0x7F:
        return "\u2421"  # ␡
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


WORK_FOLDER = "<work folder>"  # shorter than any work folder's path (mkdtemp's "/.../abgrade-XXXXXXXX")


def without_work_folder(text: str, *paths: str) -> str:
    """`text` with each of `paths` (the student's work folder, as made and as resolved)
    shown as WORK_FOLDER. The folder's name is random per run (it must be: a predictable
    name in a shared /tmp invites a symlink attack), so a submission that prints its cwd,
    `__file__` or its TMPDIR would print other text on every run; with the stand-in, the
    same file gives the same output. Applied by the grader to what it captured, before the
    bounds: the stand-in is never longer than a path it replaces, so no text grows."""
    for path in sorted({p for p in paths if len(p) > len(WORK_FOLDER)}, key=len, reverse=True):
        text = text.replace(path, WORK_FOLDER)
    return text


def clean_text(text: Any, limit: int = MESSAGE_CHARS, multiline: bool = True) -> str:
    """`text` made printable and bounded (see the module docstring). Non-strings become
    "" (the observer's shape is untrusted). `multiline`: keep newlines and tabs; CR LF
    becomes LF, a lone CR is shown (it could overwrite a line on a terminal)."""
    if not isinstance(text, str):
        return ""
    unsafe = _UNSAFE if multiline else _UNSAFE_LINE
    if len(text) <= limit and not unsafe.search(text):
        return text  # the common case costs one scan
    extra = len(text) - limit
    if extra > 0:
        text = text[:limit]
    if multiline:
        text = text.replace("\r\n", "\n")
    text = unsafe.sub(_visible, text)
    if extra > 0:
        text += f"… [{extra:,} more characters]"
    return text


def clean_line(text: Any, limit: int = NAME_CHARS) -> str:
    """A name or a single line: newlines and tabs are shown too."""
    return clean_text(text, limit, multiline=False)


def clean_data(value: Any, limit: int = MESSAGE_CHARS, depth: int = 0) -> Any:
    """Observation data of any shape with every string in it (keys too) cleaned; the
    structure is kept for the judges, which read it defensively. Nesting beyond DEPTH
    becomes None."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if isinstance(value, str):
        return clean_text(value, limit)
    if isinstance(value, list):
        if depth >= DEPTH:
            return None
        # numbers and short safe strings (most of a large observation) cost no call
        return [
            v
            if type(v) in _PLAIN or (type(v) is str and len(v) <= limit and not _UNSAFE.search(v))
            else clean_data(v, limit, depth + 1)
            for v in value
        ]
    if isinstance(value, dict):
        if depth >= DEPTH:
            return None
        return {
            (k if type(k) is str and len(k) <= NAME_CHARS and not _UNSAFE_LINE.search(k) else clean_line(k))
            if isinstance(k, str)
            else k: clean_data(v, limit, depth + 1)
            for k, v in value.items()
        }
    return value


_PLAIN = frozenset({int, float, bool, type(None)})
# for a caller's inline fast path over many short strings (a call's keys, its labels):
# a string of at most NAME_CHARS that `unsafe_in_line` finds nothing in is its own
# clean_line; else clean_line it. The same test clean_text makes first, without its call
PLAIN_TYPES = _PLAIN
unsafe_in_line = _UNSAFE_LINE.search


def clean_lines(items: Any, limit: int = NAME_CHARS) -> list[str]:
    """The strings of the list `items`, each as clean_line(item, limit) makes it; anything
    else in it, or an `items` that is no list, is dropped (a lab's labels)."""
    if not isinstance(items, list):
        return []
    # a batch cleans about 800 such lists per submission, nearly all of short safe names: one
    # search over them joined (the unsafe set is of single characters, so it finds one iff
    # some item holds one) and one C pass over their lengths, instead of a search per item
    try:
        joined = "".join(items)
    except TypeError:  # an item that is no string: dropped item by item
        return _clean_each(items, limit)
    if unsafe_in_line(joined) or max(map(len, items), default=0) > limit:
        return _clean_each(items, limit)
    return list(items)


def _clean_each(items: list, limit: int) -> list[str]:
    return [
        r if len(r) <= limit and not unsafe_in_line(r) else clean_line(r, limit) for r in items if isinstance(r, str)
    ]


def visible_controls(text: str) -> str:
    """For writers (terminal, HTML, XML), as a last line of defence: no character of
    `text` can act as a control or break an encoding (newlines and tabs are kept; a
    terminal writer adds its own colours after this)."""
    return _UNSAFE.sub(_visible, text.replace("\r\n", "\n"))


def utf8_safe(text: str) -> str:
    """For writers of UTF-8 files and JSON: no lone surrogates."""
    return re.sub("[\ud800-\udfff]", "\ufffd", text)
