"""The dry runs: a made-up batch through the user's settings and the real reward worker."""
import subprocess
import sys

from consensus_lens.verl_dry_run import _dry_run as verl_dry_run


def test_trl_dry_run_prints_what_the_trainer_gets_and_refuses_split_groups():
    ok = subprocess.run([sys.executable, "-m", "consensus_lens.trl", "--dry-run", "--operator", "majority"],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    lines = ok.stdout.splitlines()
    assert lines[0].startswith("reward function consensus_majority, step 1")
    assert lines[1].split()[:3] == ["prompt", "completion", "reward"] and "cl_label" in lines[1]
    assert len(lines) == 2 + 8
    bad = subprocess.run([sys.executable, "-m", "consensus_lens.trl", "--dry-run", "--per-device-train-batch-size", "6"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "GroupError" in bad.stdout and "num_generations=4" in bad.stdout


def test_verl_dry_run_defaults_to_v1_sample_by_sample(capsys):
    assert verl_dry_run(["--dry-run", "+consensus_lens.operator=core", "actor_rollout_ref.rollout.n=4"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("V1 trainer (trainer.use_v1=True, verl's default)") and "'operator': 'core'" in out[0]
    assert out[1].split()[:3] == ["uid", "session", "response"] and "cl_confidence" in out[1]
    rows = out[2:10]
    assert len(rows) == 8 and all(" used " in r for r in rows)  # CoRE's confidence reached the manager
    assert any("reward.reward_manager.module.path=pkg://consensus_lens.verl_v1" in line for line in out[10:])
    assert verl_dry_run(["--dry-run", "+consensus_lens.mode=ttrl"]) == 2
    assert "consensus_lens.mode" in capsys.readouterr().out
    assert verl_dry_run(["--dry-run", "trainer.test_freq=5", "actor_rollout_ref.rollout.val_kwargs.n=1"]) == 2
    assert "val_kwargs.n=1 but actor_rollout_ref.rollout.n=4" in capsys.readouterr().out


def test_verl_dry_run_of_the_legacy_trainer_runs_the_config_through_verls_own_functions(capsys):
    assert verl_dry_run(["--dry-run", "trainer.use_v1=False", "+consensus_lens.operator=majority", "+consensus_lens.mode=ttrl",
                         "actor_rollout_ref.rollout.n=4"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "'mode': 'ttrl'" in out[0]
    rows = out[2:]
    assert len(rows) == 8 and all("original_gt=" in r for r in rows)
    assert verl_dry_run(["--dry-run", "trainer.use_v1=False", "+consensus_lens.operater=core"]) == 2
    assert "operater" in capsys.readouterr().out
