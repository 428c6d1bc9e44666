"""abgrade in a course's own tooling: the `abgrade.yaml` config of a course or student
repository, the student-side check (visible cases only) with JUnit XML for CI and the
pytest plugin, and the Gradescope autograder (bundle builder and `run_autograder`)."""
