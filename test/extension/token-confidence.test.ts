// Confidence on the text (src/extension/tokens/confidence.ts): what each log shape holds, tokens
// laid onto the text, decoration bins and ranges, the lowest-confidence spans, the answer's own
// tokens, and the lines that say what is missing — figures computed by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { binOf, binRanges, layoutTokens, lowestSpans, positionCurve, quoted, spanConfidence, sparkline, tokenAt, tokenCurveOf, tokenDataOf, tokenNote, tokenReadout, type TokenData } from '../../src/extension/tokens/confidence';

const ln = Math.log;

test('tokenDataOf: tokens with strings, log-probs only, ids only (NeMo RL, masked), a mean, nothing', () => {
  assert.deepEqual(tokenDataOf({ token_logprobs: [-0.1, -2], tokens: ['a', 'b'] }), { kind: 'tokens', tokens: ['a', 'b'], logprobs: [-0.1, -2], field: 'token_logprobs' });
  // Mismatched lengths: the strings cannot be trusted to belong to the values.
  assert.deepEqual(tokenDataOf({ token_logprobs: [-0.1, -2], tokens: ['a'] }), { kind: 'logprobs', logprobs: [-0.1, -2], field: 'token_logprobs', ids: false });
  assert.deepEqual(tokenDataOf({ rollout_log_probs: [-0.5, null] }), { kind: 'logprobs', logprobs: [-0.5, null], field: 'rollout_log_probs', ids: false });
  assert.deepEqual(tokenDataOf({ generation_logprobs: [0, 0, -1, -3], token_ids: [1, 2, 3, 4], token_loss_mask: [0, 0, 1, 1] }), { kind: 'logprobs', logprobs: [-1, -3], field: 'generation_logprobs', ids: true });
  assert.deepEqual(tokenDataOf({ mean_logprob: -0.4 }), { kind: 'mean', mean: -0.4 });
  assert.deepEqual(tokenDataOf({ response: 'x' }), { kind: 'none' });
});

test('layoutTokens: exact, byte-level BPE and SentencePiece spellings, a token not in the text', () => {
  const text = 'The sum is\n 42.';
  const l = layoutTokens(text, ['The', 'Ġsum', '▁is', 'Ċ', ' 42', '<eos?>', '.'], [-0.01, -0.2, -1, -0.05, -3.5, -0.1, null]);
  assert.deepEqual(Array.from(l.starts), [0, 3, 7, 10, 11, 14, 14]);
  assert.deepEqual(Array.from(l.ends), [3, 7, 10, 11, 14, 14, 15]);
  assert.equal(l.aligned, 6);
  assert.equal(l.unaligned, 1);
  assert.ok(Number.isNaN(l.logprobs[6]));
  assert.equal(tokenAt(l, 12), 4);
  assert.equal(tokenAt(l, 0), 0);
  assert.equal(tokenAt(l, 15), -1);
});

test('bins: p ≥ 0.9 none, then p < 0.9, 0.5, 0.2, 0.05; adjacent tokens of one bin merge into one range', () => {
  assert.deepEqual([ln(0.95), ln(0.8), ln(0.4), ln(0.1), ln(0.01), NaN].map(binOf), [0, 1, 2, 3, 4, 0]);
  const text = 'ab\ncd ef';
  // a: p 0.95 (none), b: 0.4, newline: 0.4 (merges with b), c: 0.4, d: 0.01, ' ef': 0.1
  const l = layoutTokens(text, ['a', 'b', '\n', 'c', 'd', ' ef'], [ln(0.95), ln(0.4), ln(0.4), ln(0.4), ln(0.01), ln(0.1)]);
  const r = binRanges(text, l, 10).map((q) => Array.from(q));
  assert.deepEqual(r, [[], [10, 1, 11, 1], [11, 2, 11, 5], [11, 1, 11, 2]]);
});

test('lowestSpans: the k non-overlapping windows with the lowest mean, lowest first', () => {
  const lps = [-0.1, -0.1, -3, -3, -0.1, -0.1, -0.1, -5, -5, -0.1];
  const text = 'abcdefghij';
  const l = layoutTokens(text, text.split(''), lps);
  const s = lowestSpans(l, 2, 2);
  // Windows of 2: [7,8] mean −5, then [2,3] mean −3 — the next lowest ([6,7], [8,9]: −2.55) overlap the first.
  assert.deepEqual(s.map((x) => [x.first, x.end, x.start, x.stop, Number(x.meanLogprob.toFixed(12))]), [
    [7, 9, 7, 9, -5],
    [2, 4, 2, 4, -3],
  ]);
  assert.deepEqual(lowestSpans(layoutTokens('', [], []), 5, 8), []);
});

test('spanConfidence: the answer\u2019s own tokens — count, mean, lowest, joint probability', () => {
  const text = 'so \\boxed{42}';
  const l = layoutTokens(text, ['so', ' \\', 'boxed', '{', '4', '2', '}'], [-0.1, -0.2, -0.01, -0.01, ln(0.5), ln(0.8), -0.01]);
  const a = spanConfidence(l, 10, 12)!;
  assert.equal(a.tokens, 2);
  assert.ok(Math.abs(a.jointProb - 0.4) < 1e-12);
  assert.ok(Math.abs(a.meanLogprob - (ln(0.5) + ln(0.8)) / 2) < 1e-12);
  assert.equal(a.minLogprob, ln(0.5));
});

test('tokenReadout: the header lines for each log shape say what is shown or what is missing', () => {
  const text = 'x is \\boxed{7}';
  const full = tokenReadout(text, { kind: 'tokens', tokens: ['x', ' is', ' \\boxed{', '7', '}'], logprobs: [-0.5, -0.1, -0.05, -2, -0.01], field: 'token_logprobs' }, [12, 13]);
  assert.match(full.lines[0], /^# token confidence: 5 tokens, mean log-prob −0\.532, 1 below p = 0\.2 — background/);
  assert.equal(full.lines[1], '# answer tokens: 1, mean log-prob −2.000, lowest −2.000, together p = 0.135');
  assert.match(full.lines[2], /lowest-confidence spans \(5 tokens each\)/);
  // The text itself, as in the roll-out: one backslash, not JSON's two.
  assert.equal(full.lines[3], '#   1. "x is \\boxed{7}"  mean log-prob −0.53');
  assert.deepEqual(full.spanLines, [3]);
  const ids = tokenReadout(text, { kind: 'logprobs', logprobs: [0, -0.7, -3], field: 'generation_logprobs', ids: true }, null);
  assert.match(ids.lines[0], /3 tokens' token ids and log-probs \(generation_logprobs\) but not the tokens' text/);
  assert.match(ids.lines[0], /keep_token_logprobs=True/);
  assert.equal(ids.lines[1], '# per-position probability: █▄▁');
  assert.equal(ids.layout, null);
  assert.match(tokenReadout(text, { kind: 'mean', mean: -0.25 }, null).lines[0], /only the mean log-prob \(−0\.250\) is logged/);
  assert.match(tokenReadout(text, { kind: 'none' }, null).lines[0], /not logged/);
});

test('quoted: the text itself on one line (line breaks ⏎, tabs spaces, other controls U+FFFD), cut with …', () => {
  assert.equal(quoted('$\\boxed{2}$ "x"'), '"$\\boxed{2}$ "x""');
  assert.equal(quoted('a\r\nb\nc\u2028d\te\u0007f\u001b[31m'), '"a⏎b⏎c⏎d e\ufffdf\ufffd[31m"');
  assert.equal(quoted('abcdef', 4), '"abc…"');
});

test('sparkline: buckets of the mean log-prob as block characters', () => {
  assert.equal(sparkline([0, 0, ln(0.5), ln(0.5)], 2), '█▅');
  assert.equal(sparkline([null, -1], 2), ' ▄');
  assert.equal(sparkline([]), '');
});

test('positionCurve and tokenCurveOf: bucket means by position for the panel\u2019s roll-out rows', () => {
  assert.deepEqual(positionCurve([-1, -3, -0.5, null, null, -2], 3), [-2, -0.5, -2]);
  assert.deepEqual(positionCurve([null, null], 2), [null, null]);
  // Fewer tokens than points: one point per token.
  assert.deepEqual(positionCurve([-1, -2], 48), [-1, -2]);
  const lp = Array.from({ length: 100 }, (_, i) => -i / 100);
  const c = tokenCurveOf(3, { kind: 'logprobs', logprobs: lp, field: 'rollout_log_probs', ids: false });
  assert.equal(c.index, 3);
  assert.equal(c.tokens, 100);
  assert.equal(c.curve.length, 48);
  // Bucket 0 holds positions 0 and 1 (floor(100/48) = 2): mean −0.005.
  assert.ok(Math.abs((c.curve[0] as number) + 0.005) < 1e-12);
  assert.deepEqual(tokenCurveOf(0, { kind: 'mean', mean: -0.3 }), { index: 0, kind: 'mean', tokens: 0, curve: [] });
});

test('tokenNote: says what the group logs, what is missing and how to log it', () => {
  const tok: TokenData = { kind: 'tokens', tokens: ['a'], logprobs: [-1], field: 'token_logprobs' };
  const lps: TokenData = { kind: 'logprobs', logprobs: [-1, -2], field: 'generation_logprobs', ids: true };
  const mean: TokenData = { kind: 'mean', mean: -1 };
  assert.match(tokenNote([tok, tok])!, /^Per-token log-probs and the tokens’ text are logged/);
  const mixed = tokenNote([lps, lps, mean, { kind: 'none' }])!;
  assert.match(mixed, /2 of 4 roll-outs: per-token log-probs \(generation_logprobs, with token ids\) without the tokens’ text — the curve shows them by position/);
  assert.match(mixed, /1 of 4 roll-outs: only the mean log-prob — no curve; 1 of 4 roll-outs: no log-probs/);
  assert.match(mixed, /keep_token_logprobs=True/);
  assert.match(tokenNote([mean])!, /every roll-out: only the mean log-prob/);
  assert.match(tokenNote([null, null])!, /rows \(a TRL completions table, a W&B table\) hold no per-token log-probs/);
  assert.equal(tokenNote([]), null);
});

test('a native group record read back from disk: the roll-out item with its tokens', async () => {
  const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { readRun, readRolloutObject } = await import('../../src/logs/log-layer');
  const dir = mkdtempSync(join(tmpdir(), 'cl-tokens-'));
  const file = join(dir, 'step_1.jsonl');
  const rollouts = [
    { response: 'so \\boxed{7}', token_logprobs: [-0.1, -0.2, -1.5, -0.01], tokens: ['so', ' \\boxed{', '7', '}'] },
    { response: 'maybe \\boxed{8}', mean_logprob: -0.9 },
  ];
  writeFileSync(file, JSON.stringify({ kind: 'group', step: 1, question_id: 'q', rollouts }) + '\n');
  const groups = [];
  for await (const g of readRun(file, () => {})) groups.push(g);
  const src = groups[0].rollouts.map((r) => r.source!);
  const a = tokenDataOf((await readRolloutObject(src[0]))!);
  assert.equal(a.kind, 'tokens');
  const ro = tokenReadout(rollouts[0].response, a, [10, 11]);
  assert.equal(ro.lines[1], '# answer tokens: 1, mean log-prob −1.500, lowest −1.500, together p = 0.223');
  assert.deepEqual(tokenDataOf((await readRolloutObject(src[1]))!), { kind: 'mean', mean: -0.9 });
  rmSync(dir, { recursive: true, force: true });
});
