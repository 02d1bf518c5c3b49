"""A tiny causal LM and tokenizer built locally (no model hub), and roll-outs drawn from a known
answer distribution, for the framework tests."""
import math
import random
import string

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

SPECIALS = ["<pad>", "<eos>", "<bos>", "<unk>"]
CHARS = string.ascii_letters + string.digits + " ?+-*/=.,:\\{}()^_"


def tiny_tokenizer() -> PreTrainedTokenizerFast:
    """Character-level: one token per character, decoded by joining (decoders.Fuse)."""
    vocab = {t: i for i, t in enumerate(SPECIALS + list(CHARS))}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>",
                                   bos_token="<bos>", unk_token="<unk>")


def tiny_model(tokenizer: PreTrainedTokenizerFast, seed: int = 0) -> LlamaForCausalLM:
    import torch

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=256,
                      pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
                      bos_token_id=tokenizer.bos_token_id)
    return LlamaForCausalLM(cfg)


# Each question's answer distribution: the roll-outs' final answers are drawn from it.
QUESTIONS = [
    {"prompt": "What is 3+4?", "answer": "7", "dist": {"7": 0.6, "8": 0.3, "12": 0.1}},
    {"prompt": "What is 2*5?", "answer": "10", "dist": {"10": 0.5, "7": 0.3, "25": 0.2}},
    {"prompt": "What is 9-6?", "answer": "3", "dist": {"3": 0.4, "4": 0.4, "15": 0.2}},
    {"prompt": "What is 8/2?", "answer": "4", "dist": {"4": 0.7, "16": 0.2, "6": 0.1}},
]
TEMPLATES = ["so the answer is \\boxed{%s}", "I get \\boxed{%s}.", "answer: \\boxed{%s}"]


def prompt_of(q) -> str:
    return q["prompt"]


class KnownAnswers:
    """A TRL ``rollout_func``: for each prompt it receives (TRL passes the per-process slice with
    each prompt repeated num_generations times) one completion whose answer is drawn from the
    question's known distribution; per-token log-probs sum to the log-probability of the drawn
    answer and its template. Records what it returned, call by call."""

    def __init__(self, tokenizer, seed: int = 0, before_return=None):
        self.tok = tokenizer
        self.rng = random.Random(seed)
        self.by_prompt = {q["prompt"]: q for q in QUESTIONS}
        self.calls = []
        self.before_return = before_return

    def __call__(self, prompts, trainer):
        prompt_ids, completion_ids, logprobs, texts = [], [], [], []
        for p in prompts:
            q = self.by_prompt[p]
            answers = list(q["dist"])
            a = self.rng.choices(answers, weights=[q["dist"][x] for x in answers])[0]
            t = self.rng.randrange(len(TEMPLATES))
            text = TEMPLATES[t] % a
            ids = self.tok(text, add_special_tokens=False)["input_ids"] + [self.tok.eos_token_id]
            lp = math.log(q["dist"][a]) + math.log(1.0 / len(TEMPLATES))
            prompt_ids.append(self.tok(p, add_special_tokens=False)["input_ids"])
            completion_ids.append(ids)
            logprobs.append([lp / len(ids)] * len(ids))
            texts.append(text)
        self.calls.append({"prompts": list(prompts), "texts": texts, "logprobs": logprobs})
        if self.before_return is not None:
            self.before_return(len(self.calls))
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "logprobs": logprobs}
