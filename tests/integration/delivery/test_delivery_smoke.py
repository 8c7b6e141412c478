import json

from delivery_support import NOW, TASK, make_approved


def test_merge_ready_smoke(git_repo, run_cli):
    approved = make_approved(git_repo, run_cli)
    head = approved.pr_commit()
    snap = approved.write_snapshot(approved.snapshot(head))
    r = run_cli(
        approved.repo, "delivery", "assess", TASK, "--snapshot", str(snap), "--now", NOW, "--json"
    )
    print(r.out, r.err)
    assert r.code == 0
    doc = json.loads(r.out)
    assert doc["verdict"] == "MERGE_READY"


HV = '{"plugin_version": "1.0.0", "cli_version": "0.1.0", "corpus_hash": "sha256:' + "a" * 64 + '"}'


def test_evidence_smoke(git_repo, run_cli):
    approved = make_approved(git_repo, run_cli)
    head = approved.pr_commit()
    snap = approved.write_snapshot(approved.snapshot(head))
    r = run_cli(approved.repo, "delivery", "assess", TASK, "--snapshot", str(snap), "--now", NOW)
    assert r.code == 0, r.err
    r = run_cli(
        approved.repo,
        "evidence",
        "produce",
        TASK,
        "--run-id",
        "run-1",
        "--started-at",
        "2026-12-02T09:00:00Z",
        "--now",
        NOW,
        "--repository",
        "demo",
        "--harness-version",
        HV,
        "--harness-version-end",
        HV,
        "--routing-decisions",
        "[]",
    )
    print(r.out, r.err)
    assert r.code == 0
    ev = approved.repo.parent / "ev.json"
    ev.write_text(r.out)
    r = run_cli(approved.repo, "evidence", "verify", str(ev), TASK, "--json")
    print(r.out, r.err)
    assert r.code == 4
