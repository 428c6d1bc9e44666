#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (the bundle is
# unpacked in /autograder/source): install abgrade from the wheel in this bundle.
#   ABGRADE_AUTOGRADER_ROOT  instead of /autograder (tests run the bundle in a temp folder)
#   ABGRADE_PYTHON           install into this interpreter instead of a fresh venv
#   ABGRADE_PIP_OPTIONS      extra pip options (e.g. --no-index --no-deps offline)
set -euo pipefail
root="${ABGRADE_AUTOGRADER_ROOT:-/autograder}"
python="${ABGRADE_PYTHON:-}"
if [ -z "$python" ]; then
    apt-get update
    apt-get install -y --no-install-recommends python3 python3-venv python3-pip
    python3 -m venv "$root/abgrade-venv"
    python="$root/abgrade-venv/bin/python"
fi
# shellcheck disable=SC2086  # the options are meant to split into words
"$python" -m pip install ${ABGRADE_PIP_OPTIONS:-} "$root"/source/abgrade-*.whl
"$python" -m grader --help >/dev/null
# Student code runs as an unprivileged uid of abgrade's pool (no user account needed) and
# must not read this bundle (its settings hold the seed of the hidden random cases) or the
# results: only root may enter them. Without namespaces
# (Gradescope's containers may forbid them) abgrade keeps the student out of its own
# package with ACLs, which need setfacl.
mkdir -p "$root/results"
chmod 700 "$root/source" "$root/results"
if ! command -v setfacl >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt-get install -y --no-install-recommends acl || echo "setup.sh: could not install acl (setfacl)" >&2
fi
