// Token confidence on a roll-out document: a 40 KB roll-out of 16,384 tokens with per-token
// log-probs and strings — the record parsed back from its JSON line, the tokens laid on the
// text, the four decoration bins' ranges, the lowest-confidence spans and the answer's tokens
// (src/extension/tokens/confidence.ts), plus one object per range as the editor's Range. The
// baseline, in the same run, is JSON.parse of the record line alone (what reading the roll-out's
// text back already costs). Median of 21 after 5 warm-up runs. Prints one JSON line with `rows`.
// Run: node --import tsx bench/tokens-bench.ts
import { binRanges, tokenDataOf, tokenReadout } from '../src/extension/tokens/confidence';
import { rng } from '../scripts/synth';

const r = rng(7);
const WORDS = ['the', ' sum', ' of', ' sq', ',', ' so', ' we', ' get', '\n', ' x', ' =', ' 4', '2', ' Wait', ' a', 'gain', '.'];
const tokens: string[] = [];
const logprobs: number[] = [];
while (tokens.length < 16384) {
  const t = WORDS[Math.floor(r() * WORDS.length)];
  tokens.push(t);
  // Mostly confident, with a heavy low tail (a sampler at temperature 1).
  logprobs.push(r() < 0.7 ? -0.02 * r() : -6 * r() ** 2);
}
tokens.push(' \\boxed{', '42', '}');
logprobs.push(-0.01, -0.3, -0.01);
const text = tokens.join('');
const line = JSON.stringify({ response: text, token_logprobs: logprobs, tokens });
const answer: [number, number] = [text.lastIndexOf('{') + 1, text.length - 1];

class Range {
  constructor(readonly a: number, readonly b: number, readonly c: number, readonly d: number) {}
}
function decorate(): number {
  const o = JSON.parse(line) as Record<string, unknown>;
  const ro = tokenReadout(o.response as string, tokenDataOf(o), answer);
  const bins = binRanges(o.response as string, ro.layout!, ro.lines.length + 8);
  let k = 0;
  for (const q of bins) {
    const ranges: Range[] = new Array(q.length / 4);
    for (let i = 0; i < q.length; i += 4) ranges[i / 4] = new Range(q[i], q[i + 1], q[i + 2], q[i + 3]);
    k += ranges.length;
  }
  return k;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function time(f: () => unknown): number {
  for (let i = 0; i < 5; i++) f();
  const ts: number[] = [];
  for (let i = 0; i < 21; i++) {
    const t = performance.now();
    f();
    ts.push(performance.now() - t);
  }
  return median(ts);
}
const ranges = decorate();
const ours = time(decorate);
const base = time(() => JSON.parse(line));
console.error(`text ${(text.length / 1024).toFixed(1)} KB, ${tokens.length} tokens, record ${(line.length / 1024).toFixed(0)} KB, ${ranges} ranges: decorate ${ours.toFixed(1)} ms, JSON.parse alone ${base.toFixed(1)} ms`);
const rows = [[`token confidence of a ${(text.length / 1024).toFixed(0)} KB roll-out with ${tokens.length.toLocaleString('en')} tokens (record parsed, laid out, ${ranges.toLocaleString('en')} ranges, spans, answer)`, `${ours.toFixed(1)} ms`, `${base.toFixed(1)} ms (JSON.parse of the record)`, `${(ours / base).toFixed(2)}×`, '< 100 ms', ours < 100]];
console.log(JSON.stringify({ tokens: tokens.length, textBytes: text.length, ms: ours, baselineMs: base, rows }));
