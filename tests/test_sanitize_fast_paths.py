"""The fast paths of the grader's boundary return exactly what the slow ones do, whatever
the student's process sent (grader/text.py clean_lines: one search over the labels joined;
grader/sandbox/channel.py json_depth_exceeds: strings cut out only when one holds a bracket)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.sandbox.channel import _NOT_BRACKETS, _ONE_KIND, json_depth_exceeds
from grader.text import NAME_CHARS, _clean_each, clean_lines

# names as an observer sends them, and what a hostile one may: controls, bidi marks, lone
# surrogates, names longer than the bound, things that are no strings
LETTERS = st.sampled_from(["a", "B", "7", "_", " ", "é", "\n", "\x1b", "\x85", "\u202e", "\ud800", "\x7f", "["])
NAMES = st.one_of(
    st.text(LETTERS, max_size=6),
    st.text(max_size=8),
    st.text(LETTERS, min_size=NAME_CHARS - 1, max_size=NAME_CHARS + 2),
)
ITEMS = st.one_of(NAMES, st.integers(), st.none(), st.lists(st.text(max_size=2), max_size=2))


@settings(max_examples=400, deadline=None)
@given(
    items=st.one_of(st.lists(NAMES, max_size=12), st.lists(ITEMS, max_size=8)), limit=st.sampled_from([3, NAME_CHARS])
)
def test_clean_lines_fast_path_is_the_item_by_item_one(items, limit):
    assert clean_lines(items, limit) == _clean_each(items, limit)


def test_clean_lines_of_no_list_is_empty_and_safe_names_come_back_unchanged():
    assert clean_lines("abc") == [] and clean_lines(None) == []
    names = ["a1", "b2", "root"]
    assert clean_lines(names) == names and clean_lines(names) is not names


def _exceeds_cutting_every_string(data: bytes, limit: int) -> bool:
    """json_depth_exceeds as it was (for texts up to 1 MiB): every string cut out first."""
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    if b'"' in data:
        data = b"".join(data.split(b'"')[::2])
    brackets = data.translate(_ONE_KIND, _NOT_BRACKETS)
    for _ in range(limit):
        if not brackets:
            return False
        shorter = brackets.replace(b"[]", b"")
        if len(shorter) == len(brackets):
            return False
        brackets = shorter
    return b"[]" in brackets


JSON = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(st.sampled_from('ab[]{}"\\ '), max_size=4)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text("k[{", max_size=2), inner, max_size=3)
    ),
    max_leaves=30,
)
BROKEN = b'[]{}"\\ a,'


@settings(max_examples=400, deadline=None)
@given(
    data=st.one_of(
        JSON.map(lambda value: json.dumps(value).encode()),
        st.binary(max_size=40).map(lambda raw: bytes(BROKEN[b % len(BROKEN)] for b in raw)),
    ),
    limit=st.integers(1, 6),
)
def test_depth_check_fast_path_is_the_strings_cut_one(data, limit):
    """JSON (strings with brackets, quotes and escapes in them, keys too) and broken texts of
    the characters that matter."""
    assert json_depth_exceeds(data, limit) == _exceeds_cutting_every_string(data, limit)
