"""The fast paths of the grader's boundary return exactly what the slow ones do, whatever
the student's process sent (grader/text.py clean_lines: one search over the labels joined)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

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
