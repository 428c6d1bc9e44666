"""abgrade: the grading harness (CLI `abgrade`, also `python -m grader`)."""
