import json

from delivery_support import NOW, TASK, make_approved


def test_merge_ready_smoke(git_repo, run_cli):
    approved = make_approved(git_repo, run_cli)
    head = approved.pr_commit()
    snap = approved.write_snapshot(approved.snapshot(head))
    r = run_cli(approved.repo, "delivery", "assess", TASK, "--snapshot", str(snap), "--now", NOW, "--json")
    print(r.out, r.err)
    assert r.code == 0
    doc = json.loads(r.out)
    assert doc["verdict"] == "MERGE_READY"
