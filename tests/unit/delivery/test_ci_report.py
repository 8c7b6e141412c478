"""What ci check hands to a CI system: annotations, a job summary, a SARIF log (pure)."""

from __future__ import annotations

import json

import jsonschema
import pytest

from plangate.delivery.ci_report import sarif, summary_markdown, workflow_annotations
from plangate.verdict import Reason, Result
from support.sarif import SARIF_MIN_SCHEMA

REJECTED = Result("REJECTED", (
    Reason("CI_OUTSIDE_SCOPE", "2 changed path(s) are outside", "revert them",
           ("stray.py", "lib/x.py")),
    Reason("CI_TASK_NOT_VERIFIED", "TASK-0001: not verified", "run c3 verify"),
))


def test_one_annotation_per_finding_naming_only_its_own_path() -> None:
    lines = workflow_annotations(REJECTED)
    assert lines == [
        "::error file=stray.py,title=PlanGate CI_OUTSIDE_SCOPE::stray.py: outside every task's "
        "allowed paths, or denied by a task's plan (hint: revert them)",
        "::error file=lib/x.py,title=PlanGate CI_OUTSIDE_SCOPE::lib/x.py: outside every task's "
        "allowed paths, or denied by a task's plan (hint: revert them)",
        "::error title=PlanGate CI_TASK_NOT_VERIFIED::TASK-0001: not verified (hint: run c3 verify)",
    ]


def test_a_code_without_a_finding_phrase_keeps_its_message() -> None:
    result = Result("REJECTED", (Reason("C3_SOMETHING", "the record says x", "", ("a.py",)),))
    assert workflow_annotations(result) == [
        "::error file=a.py,title=PlanGate C3_SOMETHING::the record says x"]


def test_human_required_annotates_as_a_warning() -> None:
    result = Result("HUMAN_REQUIRED", (Reason("CI_PROTECTED_SURFACE", "m", "", ("AGENTS.md",)),))
    assert workflow_annotations(result) == [
        "::warning file=AGENTS.md,title=PlanGate CI_PROTECTED_SURFACE::AGENTS.md: a protected "
        "surface: a human reviews and approves the change"
    ]


def test_each_finding_is_graded_by_its_own_rule_not_the_verdict() -> None:
    result = Result(
        "REJECTED",
        (Reason("CI_OUTSIDE_SCOPE", "m", "", ("stray.py",)),
         Reason("CI_PROTECTED_SURFACE", "m", "", ("AGENTS.md",))),
        {"severity": {"CI_OUTSIDE_SCOPE": "REJECTED", "CI_PROTECTED_SURFACE": "HUMAN_REQUIRED"}},
    )
    lines = workflow_annotations(result)
    assert [line.split(" ", 1)[0] for line in lines] == ["::error", "::warning"]
    levels = [r["level"] for r in sarif(result, version="0")["runs"][0]["results"]]
    assert levels == ["error", "warning"]


def test_past_ten_findings_of_a_kind_the_last_annotation_counts_the_rest() -> None:
    paths = tuple(f"f{i}.py" for i in range(25))
    result = Result("REJECTED", (Reason("CI_OUTSIDE_SCOPE", "m", "", paths),))
    lines = workflow_annotations(result)
    assert len(lines) == 10  # what GitHub shows of one kind for a step
    assert all(f"file=f{i}.py," in lines[i] for i in range(9))
    assert lines[9] == ("::error title=PlanGate::16 more error finding(s): see the job summary, "
                        "the SARIF log or the JSON result in the log")
    assert len(sarif(result, version="0")["runs"][0]["results"]) == 25  # all of them


@pytest.mark.parametrize("code", ["CI_OUTSIDE_SCOPE", "CI_SOMETHING"])
@pytest.mark.parametrize(
    "path",
    ["a\n::error::forged.py", "a\r\n::add-mask::x", "100%.py", "a:b,c.py", "dir/a,b::c"],
)
def test_a_hostile_path_or_message_cannot_start_a_command_of_its_own(path: str, code: str) -> None:
    result = Result("REJECTED", (Reason(code, f"outside: {path}\n::error::x", "", (path,)),))
    (line,) = workflow_annotations(result)
    assert "\n" not in line and "\r" not in line
    head, _, message = line.partition("::error file=")[2].partition("::")
    file_value = head.split(",title=")[0]
    assert ":" not in file_value and "," not in file_value and "\n" not in file_value
    # GitHub reads a command only at the start of a line: the message stays one line of data
    assert line.startswith("::error file=")
    if "%" in path:
        assert "%25" in message
    if code == "CI_SOMETHING":  # the reason's own message, its line break escaped
        assert "%0A" in message


def test_the_summary_names_the_verdict_and_escapes_cells() -> None:
    result = Result("REJECTED", (Reason("CI_OUTSIDE_SCOPE", "a|b <script>x</script>\nnext",
                                        "h|i"),))
    text = summary_markdown(result)
    assert text.startswith("## PlanGate ci check: REJECTED\n")
    row = next(line for line in text.splitlines() if line.startswith("| `CI_OUTSIDE_SCOPE`"))
    assert "a\\|b &lt;script&gt;x&lt;/script&gt; next" in row
    assert "h\\|i" in row
    assert "<script>" not in text


def test_an_unknown_verdict_is_never_described_as_fine() -> None:
    assert "treated as a failure" in summary_markdown(Result("MAYBE"))


def test_a_long_reason_list_is_cut_in_the_summary_only() -> None:
    many = Result("REJECTED", tuple(Reason(f"C{i}", "m") for i in range(80)))
    text = summary_markdown(many)
    assert "30 more in the JSON output" in text
    assert len(sarif(many, version="0")["runs"][0]["results"]) == 80



def test_sarif_has_one_result_per_offending_path_with_uri_escaped() -> None:
    result = Result("REJECTED", (
        Reason("CI_OUTSIDE_SCOPE", "outside", "revert", ("dir/a b#c.py",)),
        Reason("CI_NO_TASK", "no task"),
    ))
    log = sarif(result, version="1.2.3")
    jsonschema.validate(log, SARIF_MIN_SCHEMA)
    run = log["runs"][0]
    assert run["tool"]["driver"]["version"] == "1.2.3"
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["CI_OUTSIDE_SCOPE", "CI_NO_TASK"]
    first, second = run["results"]
    location = first["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location["uri"] == "dir/a%20b%23c.py"
    assert first["level"] == "error" and "locations" not in second
    json.dumps(log)  # serialisable as is
