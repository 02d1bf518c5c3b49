"""Self-certainty and token entropy of roll-outs, from a model's full-vocabulary logits.

torch is imported by the functions that take tensors (a trainer has it); the rest is standard
library. The definitions (docs/training-loop.md, "Self-certainty and token entropy"):

- the distribution of response token t is pi_t = softmax(z_t), z_t the logits at the position
  that predicts token t, divided by the trainer's sampling temperature (the distribution whose
  log-probs the trainer optimises and whose entropy TRL and verl report);
- self-certainty of token t: KL(U || pi_t) - log V = logsumexp(z_t) - mean(z_t) (INTUITOR; the
  constant log V dropped, as INTUITOR does); of a roll-out, its mean over the response tokens;
- entropy of token t: H(pi_t) = logsumexp(z_t) - sum_v pi_t(v) z_t(v) (RENT); of a roll-out,
  the mean over the response tokens.

Computed from sampled-token log-probs alone (no logits), the only estimate of H(pi_t) is the
sampled token's surprisal -log pi_t(y_t) (consensus_lens.nemo logs it; the extension's readers
derive it from logged token log-probs), always marked ``confidence_approximate``, never shown as
the real value. Self-certainty has no such estimate.
"""

from typing import Any, Dict, List, Optional, Sequence, Tuple

__all__ = ["token_stats", "rollout_stats"]


def token_stats(logits: Any, temperature: float = 1.0) -> Tuple[Any, Any, Any]:
    """Per position: (self-certainty, entropy, log-sum-exp) of ``logits`` [..., V] divided by
    ``temperature``, in float32 at least (float64 stays float64)."""
    import torch

    z = logits.float() if logits.dtype not in (torch.float32, torch.float64) else logits
    if temperature != 1.0:
        z = z / temperature
    lse = torch.logsumexp(z, dim=-1)
    p = torch.softmax(z, dim=-1)
    entropy = lse - (p * z).sum(dim=-1)
    return lse - z.mean(dim=-1), entropy, lse


def rollout_stats(logits: Any, tokens: Any, mask: Any, temperature: float = 1.0) -> List[Dict[str, Any]]:
    """Per row of ``logits`` [B, L, V] (position t predicts response token t), with ``tokens``
    [B, L] the response token ids and ``mask`` [B, L] their real tokens: ``self_certainty`` and
    ``entropy`` (means over the real tokens; None for a row without any), ``token_entropies`` and
    ``token_logprobs`` (the sampled tokens' log-probs under the same distribution)."""
    import torch

    sc, ent, lse = token_stats(logits, temperature)
    z = logits.float() if logits.dtype not in (torch.float32, torch.float64) else logits
    if temperature != 1.0:
        z = z / temperature
    lp = z.gather(-1, tokens.long().unsqueeze(-1)).squeeze(-1) - lse
    m = mask.bool()
    out = []
    for i in range(sc.shape[0]):
        row = m[i]
        n = int(row.sum())
        te = ent[i][row].double().tolist()
        out.append({
            "self_certainty": float(sc[i][row].double().sum()) / n if n else None,
            "entropy": float(sum(te)) / n if n else None,
            "token_entropies": te,
            "token_logprobs": lp[i][row].double().tolist(),
        })
    return out
