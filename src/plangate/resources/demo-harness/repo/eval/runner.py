"""Demo trial runner (plangate-trial/2; the protocol is documented in docs/evaluation-run.md).

Runs the side's harness verifiers over one fixture and writes OUT/result.json.
It always runs from the baseline commit; only --harness-dir differs by side.
It is told an opaque trial id, never the fixture's id or role.
"""

import argparse
import json
import pathlib
import runpy

VERIFIERS = {
    "verifier:deterministic-tests": "harness/verifiers/deterministic_tests.py",
    "verifier:completion-evidence": "harness/verifiers/completion_evidence.py",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    for name in ("--trial-id", "--harness-dir", "--fixture", "--out"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    fixture = json.loads(pathlib.Path(args.fixture).read_text(encoding="utf-8"))
    harness = pathlib.Path(args.harness_dir)
    outcome = "MERGE_READY"
    stop_reasons: list[str] = []
    activation: dict[str, dict[str, object]] = {}
    detections: dict[str, str] = {}
    for component, rel in VERIFIERS.items():
        module = runpy.run_path(str(harness / rel))
        if not module.get("ENABLED", False):
            activation[component] = {"level": "registered", "evidence_refs": []}
            continue
        status = module["check"](fixture)
        ref = f"verification:{component}:{args.trial_id}"
        level = "produced_evidence"
        if status != "pass" and outcome == "MERGE_READY":
            outcome = "BLOCKED"
            stop_reasons = ["VERIFIER_UNAVAILABLE"]
            level = "influenced_decision"
        activation[component] = {"level": level, "evidence_refs": [ref]}
        detections[component] = "detected" if status != "pass" else "not_detected"
    result = {
        "protocol": "plangate-trial/2",
        "trial_id": args.trial_id,
        "outcome": outcome,
        "stop_reasons": stop_reasons,
        "metrics": {"stopped": 1.0 if outcome != "MERGE_READY" else 0.0},
        "activation": activation,
        "detections": detections,
    }
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "result.json").write_text(json.dumps(result, sort_keys=True), encoding="utf-8")


if __name__ == "__main__":
    main()
