"""A prompt change judged by real agents on a Ray cluster: the same evaluation as
test_agent_eval.py, each Claude Code trial a Ray task in a box on a node, the nodes
holding the pinned host on PATH and the model key (the workers' own, read by name)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.agent_eval import (
    BETTER_RULES,
    KEY_ENV,
    KEY_VALUE,
    build_agent_repo,
    eval_cli,
    eval_env,
    last_experiment,
    rules_candidate,
)
from support.model_server import ModelServer, harness_worker
from support.raycluster import ray_cluster

pytestmark = pytest.mark.ray


def test_a_better_claude_md_passes_on_a_cluster(tmp_path: Path, hosts_bin: Path) -> None:
    nodes = eval_env(hosts_bin)  # what each node's `ray start` was given
    evaluator = {k: v for k, v in eval_env(None).items() if k != KEY_ENV}
    with ModelServer(then=harness_worker) as model, ray_cluster(nodes) as cluster:
        harness = build_agent_repo(tmp_path, model.base_url)
        better, _ = rules_candidate(harness, "type-hints", BETTER_RULES)
        run = eval_cli(harness.repo, evaluator | cluster.auth, "run", better, "--executor",
                       f"ray:{cluster.address}", "--json")
        report = json.loads(run.stdout)
        assert report["decision"]["decision"] == "PASS", run.stdout + run.stderr
        keys = {r.api_key for r in model.requests if r.turn is not None}
    assert keys == {KEY_VALUE}
    trials = last_experiment(harness.repo)["trials"]
    assert isinstance(trials, list) and len(trials) == 12
    assert {t["agent"]["version"] for t in trials} == {"2.1.197"}
