"""One test-time RL run: TRL's GRPOTrainer on the unlabeled test questions, the model sampling its
own roll-outs, rewarded by ``consensus_lens.trl.consensus_reward`` and logged by its RunLogger."""
import json
import os
import time
from typing import Dict, List

import lm
import task


def make_trainer_class():
    from trl import GRPOTrainer

    class ConfidenceGRPOTrainer(GRPOTrainer):
        """GRPOTrainer that hands the reward function each completion token's log-probability under
        the policy that sampled it (column ``cl_logprobs``, what ``consensus_reward`` reads for CISC
        and CoRE and logs per token). TRL's own generation draws the roll-outs; TRL gives reward
        functions no log-probs without a ``rollout_func``, so they are computed here by a forward
        pass of the same model over the same prompt and completion tokens, before the update."""

        def _generate(self, prompts):
            out = super()._generate(prompts)
            self._cl_ids = (out[0], out[1])  # prompt_ids, completion_ids (cut after the first EOS)
            return out

        def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
            prompt_ids, completion_ids = self._cl_ids
            if [list(c) for c in completion_ids] != [list(c) for c in completion_ids_list]:
                raise RuntimeError("the completions to reward are not the ones just generated")
            lps = lm.token_logprobs(self.model, prompt_ids, completion_ids, self.processing_class.pad_token_id)
            if getattr(self, "cl_ids_path", None):
                # The sampled token ids, in the batch's order (the log's): special tokens decode to no
                # text, so the log's token texts alone cannot name them (the smoke test re-scores these).
                with open(self.cl_ids_path, "a") as f:
                    f.write(json.dumps({"step": self.state.global_step + 1, "prompt_ids": [list(map(int, p)) for p in prompt_ids],
                                        "completion_ids": [list(map(int, c)) for c in completion_ids]}) + "\n")
            inputs = [dict(x, cl_logprobs=lp) for x, lp in zip(inputs, lps)]
            return super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)

    return ConfidenceGRPOTrainer


def run(ckpt: str, operator: str, seed: int, cfg: Dict, out_dir: str, log=print) -> Dict:
    """TTRL with ``operator`` from the checkpoint ``ckpt``; writes ``out_dir``/consensus (the native
    log), eval.jsonl (greedy accuracy of the policy on the test questions at checkpoints) and
    trainer_log.json (TRL's own metrics)."""
    import torch
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig

    from consensus_lens.trl import consensus_reward

    model, tok = lm.load(ckpt)
    test, _ = task.split(cfg["data_seed"], cfg["n_test"], cfg["n_val"])
    rows = [{"prompt": task.prompt(q), "question_id": "q%03d" % i, "answer": str(task.answer(q))} for i, q in enumerate(test)]
    os.makedirs(out_dir, exist_ok=True)
    evals: List[Dict] = []
    start = time.time()

    class Evaluate(TrainerCallback):
        """Greedy accuracy of the policy on every test question (greedy draws no random numbers, so
        the training's sampling is the same with or without it)."""

        def at(self, step, model):
            acc = lm.accuracy(model, tok, test, sample=False, max_new=cfg["max_new"])
            evals.append({"step": step, "greedy_acc": acc, "seconds": round(time.time() - start, 1)})
            log("  %s seed %d step %d greedy test acc %.3f (%.0f s)" % (operator, seed, step, acc, time.time() - start))

        def on_train_begin(self, args, state, control, model=None, **kw):
            self.at(0, model)

        def on_step_end(self, args, state, control, model=None, **kw):
            if state.global_step % cfg["eval_every"] == 0 or state.global_step == state.max_steps:
                self.at(state.global_step, model)

    reward = consensus_reward(operator, cfg.get("params", {}).get(operator), log_dir=os.path.join(out_dir, "consensus"))
    n = cfg["num_generations"]
    args = GRPOConfig(
        output_dir=os.path.join(out_dir, "trl"), max_steps=cfg["steps"], per_device_train_batch_size=cfg["questions_per_step"] * n,
        num_generations=n, learning_rate=cfg["rl_lr"], lr_scheduler_type="constant", warmup_steps=0, logging_steps=1,
        log_completions=False, report_to=[], save_strategy="no", use_cpu=True, bf16=False, beta=0.0,
        max_completion_length=cfg["max_new"], temperature=1.0, top_k=0, top_p=1.0, seed=seed, data_seed=seed,
        disable_tqdm=True, dataloader_num_workers=0)
    trainer = make_trainer_class()(model=model, reward_funcs=[reward], args=args, train_dataset=Dataset.from_list(rows),
                                   processing_class=tok, callbacks=[Evaluate()])
    trainer.cl_ids_path = os.path.join(out_dir, "sampled_ids.jsonl")
    torch.manual_seed(seed)
    try:
        trainer.train()
    finally:
        if reward.logger is not None:
            reward.logger.close()
        reward.worker.close()
    with open(os.path.join(out_dir, "eval.jsonl"), "w") as f:
        for e in evals:
            f.write(json.dumps(e) + "\n")
    with open(os.path.join(out_dir, "trainer_log.json"), "w") as f:
        json.dump(trainer.state.log_history, f)
    return {"operator": operator, "seed": seed, "evals": evals, "seconds": round(time.time() - start, 1)}
