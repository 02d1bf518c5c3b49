"""The synthetic task, the character tokenizer and the model of the tiny test-time RL experiment.

Questions are two-step integer arithmetic, ``a op b op c`` with a two-digit ``a``, one-digit ``b``
and ``c`` and op in {+, -}; the answer is written as a short derivation ending in ``\\boxed{}``:

    prompt      "47+8-9="
    completion  "47+8=55,55-9=46 \\boxed{46}" <eos>

Carries and borrows make some questions systematically harder than others. Every prompt has the
same length (seven characters), so batches of prompts never need padding:
the positions the model sees while sampling are the positions of a plain forward pass, and the
log-probs the experiment logs are those of a forward pass over prompt + completion.
"""
import random
from typing import Dict, List, Optional, Sequence, Tuple

SPECIALS = ["<pad>", "<eos>", "<bos>", "<unk>"]
CHARS = "0123456789+-=, \\boxed{}"
PROMPT_LEN = 7


def tokenizer():
    """Character level, one token per character, built here (no model hub)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = sorted(set(CHARS), key=CHARS.index)
    vocab = {t: i for i, t in enumerate(SPECIALS + chars)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>",
                                   bos_token="<bos>", unk_token="<unk>")


def model(tok, size: Dict[str, int], seed: int):
    """A Llama-style decoder initialised from ``seed``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=size["hidden"], intermediate_size=size["ffn"],
                      num_hidden_layers=size["layers"], num_attention_heads=size["heads"],
                      num_key_value_heads=size["heads"], max_position_embeddings=64,
                      pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id,
                      tie_word_embeddings=True)
    return LlamaForCausalLM(cfg)


Question = Tuple[int, str, int, str, int]


def draw(rng: random.Random) -> Question:
    return (rng.randint(10, 99), rng.choice("+-"), rng.randint(1, 9), rng.choice("+-"), rng.randint(1, 9))


def _apply(x: int, op: str, y: int) -> int:
    return x + y if op == "+" else x - y


def prompt(q: Question) -> str:
    a, o1, b, o2, c = q
    return "%d%s%d%s%d=" % (a, o1, b, o2, c)


def answer(q: Question) -> int:
    a, o1, b, o2, c = q
    return _apply(_apply(a, o1, b), o2, c)


def derivation(q: Question) -> str:
    a, o1, b, o2, c = q
    m = _apply(a, o1, b)
    return "%d%s%d=%d,%d%s%d=%d \\boxed{%d}" % (a, o1, b, m, m, o2, c, answer(q), answer(q))


def boxed(text: str) -> Optional[str]:
    """The content of the last ``\\boxed{...}`` of a completion, or None."""
    i = text.rfind("\\boxed{")
    if i < 0:
        return None
    j = text.find("}", i)
    return text[i + 7:j] if j > i else None


def correct(text: str, q: Question) -> bool:
    return boxed(text) == str(answer(q))


def split(seed: int, n_test: int, n_val: int) -> Tuple[List[Question], List[Question]]:
    """Held-out test questions (the unlabeled TTRL set) and validation questions for pretraining's
    stopping rule; pretraining never sees either (``train_batch`` rejects them)."""
    rng = random.Random(seed)
    seen = set()
    out: List[Question] = []
    while len(out) < n_test + n_val:
        q = draw(rng)
        if q not in seen:
            seen.add(q)
            out.append(q)
    return out[:n_test], out[n_test:]


def train_batch(rng: random.Random, n: int, held_out: Sequence[Question]) -> List[Question]:
    held = set(held_out)
    out: List[Question] = []
    while len(out) < n:
        q = draw(rng)
        if q not in held:
            out.append(q)
    return out
