"""The GitHub workflow the docs tell a team to add: the check, the SARIF upload with the
permission it needs, and the human gate on the action's ``human_required`` output."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]
SECTION = "### On GitHub: the action, the SARIF upload and the human gate"


def _workflow() -> dict[str, Any]:
    doc = (ROOT / "docs" / "agents.md").read_text()
    section = doc[doc.index(SECTION):]
    block = re.search(r"```yaml\n(.*?)```", section, flags=re.DOTALL)
    assert block is not None
    loaded = yaml.safe_load(block.group(1))
    assert isinstance(loaded, dict)
    return loaded


def _step(job: dict[str, Any], uses_prefix: str) -> dict[str, Any]:
    (step,) = [s for s in job["steps"] if str(s.get("uses", "")).startswith(uses_prefix)]
    return step


def test_the_workflow_runs_on_pull_requests_with_the_full_history_at_the_head() -> None:
    workflow = _workflow()
    assert workflow.get("on", workflow.get(True)) == "pull_request"  # YAML 1.1 reads 'on' as true
    checkout = _step(workflow["jobs"]["plangate"], "actions/checkout@")
    assert checkout["with"] == {"ref": "${{ github.event.pull_request.head.sha }}",
                                "fetch-depth": 0}


def test_the_sarif_log_is_uploaded_with_the_permission_it_needs_whatever_the_verdict() -> None:
    job = _workflow()["jobs"]["plangate"]
    assert job["permissions"]["security-events"] == "write"
    check = next(s for s in job["steps"] if s.get("id") == "plangate")
    upload = _step(job, "github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == check["with"]["sarif"]
    # a REJECTED check fails its step: the upload still runs (and only when a log exists)
    assert "!cancelled()" in upload["if"]
    assert f"hashFiles('{check['with']['sarif']}')" in upload["if"]


def test_human_required_is_handed_to_a_job_in_a_deployment_environment() -> None:
    jobs = _workflow()["jobs"]
    assert jobs["plangate"]["outputs"]["human_required"] == (
        "${{ steps.plangate.outputs.human_required }}")
    review = jobs["human-review"]
    assert review["needs"] == "plangate"
    assert review["if"] == "${{ needs.plangate.outputs.human_required == 'true' }}"
    assert review["environment"] == "plangate-review"


def test_the_action_declares_what_the_workflow_uses_and_the_script_sets_it() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert "sarif" in action["inputs"] and "fail-on-human-required" in action["inputs"]
    assert action["inputs"]["fail-on-human-required"]["default"] == "false"
    assert action["outputs"]["human_required"]["value"] == (
        "${{ steps.check.outputs.human_required }}")
    (check,) = [s for s in action["runs"]["steps"] if s.get("id") == "check"]
    assert check["env"]["FAIL_ON_HUMAN_REQUIRED"] == "${{ inputs.fail-on-human-required }}"
    script = (ROOT / "scripts" / "ci-action.sh").read_text()
    assert 'echo "human_required=true" >> "$OUTPUT_FILE"' in script


def test_getting_started_tells_the_team_to_add_the_workflow() -> None:
    guide = (ROOT / "docs" / "getting-started.md").read_text()
    adoption = guide[guide.index("## 3. The adoption"):guide.index("## 4.")]
    assert "git add .github/workflows/plangate.yml" in adoption
    assert "agents.md#on-github-the-action-the-sarif-upload-and-the-human-gate" in adoption
    assert "plangate-review" in adoption
