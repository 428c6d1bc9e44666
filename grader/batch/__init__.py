"""Batch grading for instructors (`abgrade batch`): every submission of a class folder,
graded in parallel grader processes, recorded in a SQLite gradebook as each one finishes,
then exported as grades.csv, one feedback file per student and a class summary.

One module per job: `discovery` (which file is whose), `pool` (the grader processes),
`task` (what a grader process does with one file), `gradebook` (SQLite), `progress`
(bar and ETA), `feedback`, `exports`, `summary`, `picture` (the SVG), and `runner`, which
ties them together.
"""
