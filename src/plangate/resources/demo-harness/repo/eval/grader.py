"""Demo grader (plangate-grade/1; see docs/evaluation-run.md): the baseline's stable judge.

Reads the runner's result.json and writes OUT/grade.json with judgement
"stopped" (the run did not reach MERGE_READY), "passed", or "unavailable".
"""

import argparse
import json
import pathlib


def main() -> None:
    parser = argparse.ArgumentParser()
    for name in ("--side", "--fixture", "--fixture-id", "--role", "--result", "--out"):
        parser.add_argument(name, required=True)
    parser.add_argument("--trial", type=int, required=True)
    args = parser.parse_args()
    try:
        result = json.loads(pathlib.Path(args.result).read_text(encoding="utf-8"))
        judgement = "passed" if result["outcome"] == "MERGE_READY" else "stopped"
    except (OSError, ValueError, KeyError):
        judgement = "unavailable"
    grade = {
        "protocol": "plangate-grade/1",
        "side": args.side,
        "fixture_id": args.fixture_id,
        "role": args.role,
        "trial": args.trial,
        "judgement": judgement,
    }
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "grade.json").write_text(json.dumps(grade, sort_keys=True), encoding="utf-8")


if __name__ == "__main__":
    main()
