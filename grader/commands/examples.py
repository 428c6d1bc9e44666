"""The examples at the end of every command's `--help` (argparse epilogs), in one place so
that a new command can't ship without them: `add_examples` refuses a parser it has none
for (tests/test_cli_papercuts.py walks every command)."""

from __future__ import annotations

import argparse
import textwrap

EXAMPLES: dict[str, str] = {
    "abgrade": """\
  abgrade exercise tree -o my_lab.py          # a student's starting file
  abgrade grade my_lab.py --lab tree          # grade it
  abgrade batch submissions/ --lab tree       # grade a class folder
  abgrade COMMAND --help                      # more on one command""",
    "grade": """\
  abgrade grade my_lab.py --lab tree
  abgrade grade my_lab.ipynb --lab tictactoe --json results.json --html report.html
  abgrade grade my_lab.py --lab negamax --verbose     # every failure in full
  abgrade grade my_lab.py --lab tree --quiet          # only the score""",
    "batch": """\
  abgrade batch submissions/ --lab tree --jobs 2
  abgrade batch canvas-download/ --lab tree           # Canvas/Moodle/Blackboard names are recognised
  abgrade batch lab1/ --lab tree --id-pattern '_(?P<id>\\d+)_'
  abgrade batch lab1/ --lab tree --student 10002      # grade one student again (same seed)
  abgrade batch lab1/ --lab tree --deadline 2026-03-01T23:59:00+01:00 --late-per-day 10""",
    "gradebook": """\
  abgrade gradebook show --book lab1-abgrade
  abgrade gradebook override 10002 --points 20 --reason "regrade request"
  abgrade gradebook export --format canvas --roster canvas-gradebook.csv -o lab1.csv
  CANVAS_TOKEN=... abgrade gradebook publish --canvas https://canvas.example.edu --course 42 --assignment 7 --dry-run""",
    "gradebook show": """\
  abgrade gradebook show                      # the table of the one *-abgrade folder here
  abgrade gradebook show 10002 --book lab1-abgrade
  abgrade gradebook show --json > grades.json""",
    "gradebook override": """\
  abgrade gradebook override 10002 --points 20 --reason "regrade request: tie case unclear"
  abgrade gradebook override 10003 --add -1 --reason "copied helper without credit" --by ta_kim
  abgrade gradebook override 10003 --remove --reason "cleared up" """,
    "gradebook export": """\
  abgrade gradebook export --format canvas --roster canvas-gradebook.csv --assignment "Lab 1 (4711)" -o lab1.csv
  abgrade gradebook export --format moodle --roster moodle-participants.csv --moodle-id idnumber -o lab1.csv
  abgrade gradebook export --format blackboard --roster bb-roster.csv --assignment "Lab 1 |12345" -o lab1.csv
  abgrade gradebook export --format csv > grades.csv""",
    "gradebook publish": """\
  export CANVAS_TOKEN=...                     # a Canvas access token (never a flag)
  abgrade gradebook publish --canvas https://canvas.example.edu --course 42 --assignment 7 \\
      --roster canvas-gradebook.csv --dry-run # what would change, nothing sent
  abgrade gradebook publish --canvas https://canvas.example.edu --course 42 --assignment 7 \\
      --roster canvas-gradebook.csv --comments   # and the feedback as a comment with the HTML""",
    "check": """\
  abgrade check tree=labs/tree.ipynb negamax=negamax.py --junit results.xml
  abgrade check                               # every lab listed in the nearest abgrade.yaml
  abgrade check --init-ci --package 'abgrade @ git+https://github.com/OWNER/abgrade@v1.0.0'""",
    "gradescope": """\
  abgrade gradescope build --lab tree -o autograder.zip
  abgrade gradescope run --root /tmp/autograder      # what run_autograder does, in a local layout""",
    "gradescope build": """\
  abgrade gradescope build --lab tree -o autograder.zip
  abgrade gradescope build --lab negamax --spec course/negamax.yaml -o negamax.zip --force""",
    "gradescope run": """\
  ABGRADE_AUTOGRADER_ROOT=/tmp/autograder abgrade gradescope run
  abgrade gradescope run --root /tmp/autograder --lab tree""",
    "demo": """\
  abgrade demo""",
    "exercise": """\
  abgrade exercise tree -o my_lab.py
  abgrade exercise tictactoe --notebook -o my_lab.ipynb
  abgrade exercise negamax -o exercises/negamax/lab.py --force""",
    "specs": """\
  abgrade specs verify
  abgrade specs verify tree negamax
  abgrade specs verify --spec course/tree.yaml""",
    "specs verify": """\
  abgrade specs verify
  abgrade specs verify --spec course/tree.yaml
  abgrade specs verify pebbles/              # a lab folder""",
    "cluster": """\
  abgrade cluster certs /etc/abgrade-cluster --days 180""",
    "cluster certs": """\
  abgrade cluster certs /etc/abgrade-cluster      # ca.pem, ROLE.pem and ROLE-key.pem per role
  abgrade cluster certs creds/ --days 30 --force""",
    "student-wheel": """\
  abgrade student-wheel -o ci                 # in a checkout of abgrade: the wheel students install""",
    "serve": """\
  abgrade serve --detach                      # a warm grader in the background (15 min idle)
  abgrade grade my_lab.py --lab tree          # now forked from it: the same output, sooner
  abgrade serve --status
  abgrade serve --stop""",
    "lab": """\
  abgrade lab new pebbles""",
    "lab new": """\
  abgrade lab new pebbles                     # pebbles/game.py, reference.py, spec.yaml, bugs/
  abgrade specs verify pebbles/ && abgrade grade my_pebbles.py --lab pebbles/""",
}


def add_examples(parser: argparse.ArgumentParser, name: str = "abgrade") -> None:
    """Give `parser` and every sub-command under it its examples (raises KeyError for a
    command without any: add them to EXAMPLES)."""
    examples = EXAMPLES[name]
    if name == "abgrade":  # a build with fewer commands (the student wheel) shows only its own
        commands = {c for a in parser._actions if isinstance(a, argparse._SubParsersAction) for c in a.choices}
        examples = "\n".join(
            line for line in examples.splitlines() if line.split()[1] in commands or line.split()[1] == "COMMAND"
        )
    parser.epilog = "examples:\n" + examples
    parser.formatter_class = argparse.RawDescriptionHelpFormatter  # keeps the examples' lines as written
    if parser.description and "\n" not in parser.description:
        parser.description = textwrap.fill(parser.description, 80)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                add_examples(sub, command if name == "abgrade" else f"{name} {command}")
