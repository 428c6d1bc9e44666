"""Same messages before and after a change to the judges: grade every tree and tictactoe
fixture but the hostile ones (tests/fixtures/{tree,tictactoe,diagnoses,strict}, with the
bundled specs and the strict courses' too) and every lab folder's bugs/ file
(examples/labs/*/bugs), each with the spec's seed and two others, and write each grade's
results.json and every test's details (the counterexamples live there), `execution_time`
left out, to one JSON file. Run it in two checkouts and compare the files:

    python bench/same_messages.py OUT.json [--only tree|tictactoe|nim|catmouse] [--seeds spec,7]
    python bench/same_messages.py --diff OLD.json NEW.json [NEW2.json ...]   # --only parts merged

Run it from the checkout's own folder: its `grader` and `reference` come first on the path.
Each record is also appended to OUT.jsonl as it is made (--diff reads either). One grading
after another, in-process: the tree's in about 25 minutes under a load of 20, tictactoe's
many times slower."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

PROJECT = Path.cwd()
sys.path.insert(0, str(PROJECT))

from grader.grading import grade_submission  # noqa: E402
from grader.lab_setup import load_lab  # noqa: E402
from grader.report.gradescope import results_json  # noqa: E402

SEEDS = (None, 7, 20261127)
FIXTURES = PROJECT / "tests" / "fixtures"
STRICT = PROJECT / "specs" / "examples"
# (name, folder of submissions, lab, spec): the bundled specs, and the strict courses' too
GROUPS = (
    ("tree", "tree", "tree", None),
    ("diagnoses", "diagnoses", "tree", None),
    ("tree-strict", "tree", "tree", STRICT / "tree-strict.yaml"),
    ("tictactoe", "tictactoe", "tictactoe", None),
    ("tictactoe-strict", "tictactoe", "tictactoe", STRICT / "tictactoe-strict.yaml"),
    ("strict", "strict", "tree", None),
    ("strict", "strict", "tictactoe", None),
)


def submissions(only: str | None) -> list[tuple[str, str, Path | None, Path]]:
    """(group, lab, spec, file) of every submission graded."""
    found = []
    for group, folder, lab, spec in GROUPS:
        if only in (None, lab):
            files = sorted((FIXTURES / folder).glob("*.py"))
            if group == "strict":  # a folder of every lab's: the files named after this one
                files = [path for path in files if path.name.startswith(f"{lab}_")]
            # the hostile files end before any judging (at load, or as a limit), some after
            # a limit's whole wall-clock backstop: not what a judge's change can move
            files = [path for path in files if not path.name.startswith("hostile_")]
            found += [(group, lab, spec, path) for path in files]
    for labdir in sorted((PROJECT / "examples" / "labs").iterdir()):
        if only in (None, labdir.name) and (labdir / "bugs").is_dir():
            files = sorted(p for p in (labdir / "bugs").rglob("*.py"))
            found += [(f"examples/{labdir.name}", str(labdir), None, path) for path in files]
    return found


def graded(only: str | None, seeds: tuple[int | None, ...], lines: Path | None = None) -> dict[str, object]:
    """Every grade's record; each also appended to `lines` (one JSON object a line) as it is
    made, so that a run cut short can still be compared as far as it went."""
    out: dict[str, object] = {}
    labs: dict[tuple, tuple] = {}
    for group, lab_name, spec_file, path in submissions(only):
        key = (lab_name, spec_file)
        if key not in labs:
            labs[key] = load_lab(lab_name, spec_file)
        lab, spec = labs[key]
        for seed in seeds:
            report = grade_submission(path, lab, spec, seed=seed)
            data = results_json(report)
            data.pop("execution_time", None)
            details = [test.details for test in report.tests]
            name = path.relative_to(path.parents[1]) if group.startswith("examples") else path.name
            key = f"{group}/{name} seed={seed}"
            out[key] = {"results": data, "details": details}
            if lines is not None:
                with lines.open("a") as handle:
                    handle.write(json.dumps({key: out[key]}, sort_keys=True, default=str) + "\n")
            print(f"{group} {path.name} seed={seed}: {report.score:g}", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?")
    parser.add_argument("--only", help="one lab: tree, tictactoe, or a lab folder's name")
    parser.add_argument("--seeds", help="instead of the spec's seed and two others: e.g. spec,7")
    parser.add_argument("--diff", nargs="+", metavar="FILE", help="OLD NEW...: the NEW files (--only parts) merged")
    args = parser.parse_args()
    if args.diff:
        old, new = read(Path(args.diff[0])), {}
        for part in args.diff[1:]:
            new.update(read(Path(part)))
        both = old.keys() & new.keys()  # a run cut short (OUT.jsonl) is compared as far as it went
        differ = sorted(k for k in both if old[k] != new[k])
        for key in differ:
            print("differs:", key)
        print(f"{len(old)} grades before, {len(new)} after, {len(both)} in both, {len(differ)} differ")
        sys.exit(1 if differ else 0)
    seeds = SEEDS if args.seeds is None else tuple(None if s == "spec" else int(s) for s in args.seeds.split(","))
    out = Path(args.out)
    lines = out.with_suffix(".jsonl")
    lines.unlink(missing_ok=True)
    out.write_text(json.dumps(graded(args.only, seeds, lines), indent=1, sort_keys=True, default=str) + "\n")


def read(path: Path) -> dict:
    """A run's records: its JSON file, or the lines of a run cut short (OUT.jsonl)."""
    if path.suffix == ".jsonl":
        found: dict = {}
        for line in path.read_text().splitlines():
            found.update(json.loads(line))
        return found
    return json.loads(path.read_text())


if __name__ == "__main__":
    main()
