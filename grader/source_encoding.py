"""Telling a file saved as UTF-16 or UTF-32 (Windows editors and PowerShell's `>` do it)
from a UTF-8 one, before it is run: Python would only say "source code cannot contain null
bytes", and Jupyter "invalid JSON", where the student needs "save it as UTF-8"."""

from __future__ import annotations

SAMPLE_BYTES = 4096
# longest first: UTF-32's little-endian mark begins with UTF-16's
_MARKS = (
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\xfe\xff", "UTF-16"),
    (b"\xff\xfe", "UTF-16"),
)
_WITHOUT_MARK = (("utf-32-le", "UTF-32"), ("utf-32-be", "UTF-32"), ("utf-16-le", "UTF-16"), ("utf-16-be", "UTF-16"))


def wide_encoding(head: bytes) -> str | None:
    """ "UTF-16" or "UTF-32" when the file's first bytes are text in that encoding (with or
    without a byte-order mark), else None. Without a mark, the sample must decode strictly
    into mostly printable text with no NUL: UTF-8 text (which has no NUL bytes) never does."""
    for mark, name in _MARKS:
        if head.startswith(mark):
            return name
    sample = head[:SAMPLE_BYTES]
    if b"\x00" not in sample:
        return None
    for codec, name in _WITHOUT_MARK:
        unit = 4 if name == "UTF-32" else 2
        try:
            text = sample[: len(sample) - len(sample) % unit].decode(codec)
        except UnicodeDecodeError:
            continue
        if text and "\x00" not in text and _mostly_printable(text):
            return name
    return None


def _mostly_printable(text: str) -> bool:
    shown = sum(1 for c in text if c.isprintable() or c in "\t\r\n\f")
    return shown >= 0.95 * len(text)


def resave_advice(name: str, what: str = "Python files") -> str:
    """The one line a student reads."""
    return (
        f"the file is saved as {name}, but {what} must be UTF-8: save it as UTF-8 "
        "(in your editor: Save with Encoding, or File > Save As with encoding UTF-8) and submit it again"
    )
