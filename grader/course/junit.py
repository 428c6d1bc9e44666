"""JUnit XML for CI test reporters: one <testsuite> per lab and one <testcase> per abgrade
test (classname = the lab), a failed test's output as its failure message."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from ..results import GradeReport
from ..text import visible_controls

# Characters XML 1.0 cannot hold; student output may contain them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
STUDENT_OUTPUT_CHARS = 20000


def _text(value: str) -> str:
    """Control characters shown as the text boundary shows them (ESC as ␛), then anything
    XML 1.0 still can't hold (lone surrogates, U+FFFE, ...) replaced."""
    return _NOT_XML.sub("\ufffd", visible_controls(value))


def junit_xml(reports: Sequence[GradeReport]) -> str:
    """The XML document for the given labs' reports."""
    failures = sum(1 for r in reports for t in r.tests if not t.passed)
    root = ET.Element(
        "testsuites",
        name="abgrade",
        tests=str(sum(len(r.tests) for r in reports)),
        failures=str(failures),
        errors="0",
        time=f"{sum(r.execution_time for r in reports):.3f}",
    )
    for report in reports:
        root.append(_suite(report))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(report: GradeReport) -> ET.Element:
    suite = ET.Element(
        "testsuite",
        name=report.lab,
        tests=str(len(report.tests)),
        failures=str(sum(1 for t in report.tests if not t.passed)),
        errors="0",
        skipped="0",
        time=f"{report.execution_time:.3f}",
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("submission", report.submission),
        ("score", f"{report.score:g}"),
        ("max_score", f"{report.max_score:g}"),
    ):
        ET.SubElement(properties, "property", name=name, value=_text(value))
    for test in report.tests:
        case = ET.SubElement(suite, "testcase", classname=report.lab, name=_text(test.name))
        if not test.passed:
            failure = ET.SubElement(case, "failure", message=_text(test.output), type=test.kind)
            failure.text = _text(test.output)
    out = "\n".join(report.notes)
    if report.load_notes:
        out += "\nWhile loading the submission:\n" + "\n".join(f"  - {n}" for n in report.load_notes)
    if report.not_run:
        out += f"\n{len(report.not_run)} tests not run: the submission did not load."
    if report.student_output.strip():
        out += "\nThe submission printed:\n" + report.student_output[:STUDENT_OUTPUT_CHARS]
    ET.SubElement(suite, "system-out").text = _text(out)
    return suite


def write_junit(reports: Sequence[GradeReport], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(junit_xml(reports), encoding="utf-8")
