"""Code that runs INSIDE the student's process.

Nothing here is imported there as a package: the grader reads these files as text and
ships them to the worker (see `grader/sandbox/bootstrap.py`), so the student process never
gets a path into the grader, the specs or the reference. Every module here therefore
imports only the standard library, observes, and never judges.
"""
