"""Reference solver: games, search algorithms with full traces, and reference solutions."""
