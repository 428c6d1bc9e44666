"""Pictures for the HTML report, shared by the labs: one module per kind of picture (game
trees, tic-tac-toe boards, Connect Four boards, Nim heaps) and `positions`, the row of
captioned positions most labs draw. Each lab's `picture()` turns its tests' `details` into
one of these. Everything is inline SVG in the report's own classes (report/html_style.py);
every string that reaches the page is escaped here, and details that can't be drawn give a
line of text, never an exception."""
