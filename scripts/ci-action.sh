#!/usr/bin/env bash
# The check step of the composite GitHub Action (action.yml): runs `plangate ci check`
# on the pull request and always reports, whatever the outcome: the reasons in the log,
# one annotation per finding, a job summary, the `verdict`, `human_required` and
# `exit-code` outputs, and a SARIF file when asked. GitHub runs steps with
# `bash -e -o pipefail`, so every command that may fail is guarded here: the report is
# written before the step fails.
#
# HUMAN_REQUIRED is not a failure of this step: it passes (exit 0) with a warning and
# `human_required=true`, and the workflow hands the decision to GitHub's own human gate
# (a job in a deployment environment with required reviewers; see docs/agents.md).
# REJECTED always fails the step.
#
# Inputs (environment): BASE, HEAD (commits; when empty, read from the pull request in
# GitHub's event file GITHUB_EVENT_PATH), SARIF (optional path), FAIL_ON_HUMAN_REQUIRED
# ("true": HUMAN_REQUIRED fails the step with exit 3), and GitHub's GITHUB_OUTPUT and
# GITHUB_STEP_SUMMARY files (optional outside GitHub).
# Exit: 0 ACCEPTED or HUMAN_REQUIRED, 1 REJECTED, 2 usage or setup problem
# (3 HUMAN_REQUIRED with FAIL_ON_HUMAN_REQUIRED=true).
set -euo pipefail

OUTPUT_FILE="${GITHUB_OUTPUT:-/dev/null}"
SUMMARY_FILE="${GITHUB_STEP_SUMMARY:-}"
RESULT_FILE="${PLANGATE_RESULT_FILE:-plangate-ci.json}"

report() {  # report VERDICT EXIT-CODE
  echo "verdict=$1" >> "$OUTPUT_FILE"
  echo "exit-code=$2" >> "$OUTPUT_FILE"
  if [ "$1" = "HUMAN_REQUIRED" ]; then
    echo "human_required=true" >> "$OUTPUT_FILE"
  else
    echo "human_required=false" >> "$OUTPUT_FILE"
  fi
}

fail_early() {  # fail_early CODE MESSAGE: no check ran; say why everywhere, fail closed
  echo "::error title=PlanGate $1::$2"
  if [ -n "$SUMMARY_FILE" ]; then
    printf '## PlanGate ci check: REJECTED\n\n`%s`: %s\n' "$1" "$2" >> "$SUMMARY_FILE"
  fi
  report REJECTED 2
  exit 2
}

if ! command -v python3 >/dev/null 2>&1; then
  fail_early PLANGATE_NOT_INSTALLED "python3 is not on PATH"
fi

if [ -z "${BASE:-}" ] && [ -z "${HEAD:-}" ] && [ -n "${GITHUB_EVENT_PATH:-}" ]; then
  # Run as a plain 'run:' step: the pull request's commits are in GitHub's event file.
  # Only a pull_request or pull_request_target event names them; anything else is usage.
  event="$(python3 -c '
import json, re, sys
name = sys.argv[2]
if name not in ("pull_request", "pull_request_target"):
    sys.exit("the event is " + (name or "unnamed") + ", not a pull request")
try:
    with open(sys.argv[1], encoding="utf-8") as f:
        pr = json.load(f)["pull_request"]
    base, head = pr["base"]["sha"], pr["head"]["sha"]
except (OSError, ValueError, KeyError, TypeError):
    sys.exit("the event file names no pull request base and head")
sha = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
if not (isinstance(base, str) and isinstance(head, str)
        and sha.fullmatch(base) and sha.fullmatch(head)):
    sys.exit("the event file names no pull request base and head")
print(base, head)
' "$GITHUB_EVENT_PATH" "${GITHUB_EVENT_NAME:-}" 2>&1)" \
    || fail_early CI_USAGE "base and head are required: ${event}"
  BASE="${event% *}"
  HEAD="${event#* }"
fi
if [ -z "${BASE:-}" ] || [ -z "${HEAD:-}" ]; then
  fail_early CI_USAGE "base and head are required (run on pull_request, or pass them as inputs)"
fi
if ! command -v plangate >/dev/null 2>&1; then
  fail_early PLANGATE_NOT_INSTALLED "the plangate command is not on PATH"
fi

# The check reads the task files from the working tree, so the working tree must be the
# head commit (actions/checkout checks out a merge commit by default: pass the pull
# request's head sha as 'ref' and 'fetch-depth: 0').
head_commit="$(git rev-parse --verify --quiet "$HEAD^{commit}" || true)"
if [ -z "$head_commit" ]; then
  fail_early CI_HEAD_UNKNOWN "the head commit $HEAD is not in this clone (fetch it, fetch-depth: 0)"
fi
if [ "$(git rev-parse HEAD 2>/dev/null || true)" != "$head_commit" ]; then
  git checkout --quiet --detach "$head_commit" \
    || fail_early CI_HEAD_NOT_CHECKED_OUT "cannot check out the head commit $HEAD"
fi

args=(ci check --base "$BASE" --head "$HEAD" --json --annotations)
if [ -n "$SUMMARY_FILE" ]; then args+=(--summary "$SUMMARY_FILE"); fi
if [ -n "${SARIF:-}" ]; then args+=(--sarif "$SARIF"); fi

code=0
plangate "${args[@]}" > "$RESULT_FILE" || code=$?
cat "$RESULT_FILE"

verdict="$(python3 -c '
import json, sys
try:
    with open(sys.argv[1], encoding="utf-8") as f:
        v = json.load(f).get("verdict")
except Exception:
    v = None
print(v if v in ("ACCEPTED", "HUMAN_REQUIRED", "REJECTED") else "")
' "$RESULT_FILE" 2>/dev/null || true)"

if [ -z "$verdict" ]; then
  # No verdict: plangate stopped before judging (its message is above). Fail closed.
  echo "::error title=PlanGate::ci check gave no verdict (exit $code); see the log above"
  if [ -n "$SUMMARY_FILE" ]; then
    printf '## PlanGate ci check: REJECTED\n\nThe check gave no verdict (exit %s).\n' \
      "$code" >> "$SUMMARY_FILE"
  fi
  report REJECTED "$code"
  [ "$code" = "0" ] && code=1
  exit "$code"
fi

report "$verdict" "$code"
case "$verdict" in
  ACCEPTED) exit 0 ;;
  HUMAN_REQUIRED)
    # A notice, not a warning: the findings' warnings may use all ten GitHub shows.
    echo "::notice title=PlanGate HUMAN_REQUIRED::a human must approve this pull request:" \
      "the check passes and hands the decision to the workflow's human gate"
    if [ "${FAIL_ON_HUMAN_REQUIRED:-false}" = "true" ]; then exit 3; fi
    exit 0 ;;
  *) exit 1 ;;
esac
