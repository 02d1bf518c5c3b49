// Formatting for the explorer, the status bar, roll-out documents, and the panel's HTML shell.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerSpan, flipDescription, fmt, questionDescription, statusText, stepStats } from '../../src/extension/format';
import { contentSecurityPolicy, makeNonce, panelHtml } from '../../src/extension/webview-html';
import { filterQuestions } from '../../src/extension/explorer/filters';
import { changedParams, defaultParams, sanitizeParams } from '../../src/extension/slider-params';
import { parseParamText, parseRescoreText } from '../../src/extension/paramText';
import type { QuestionSummary } from '../../src/extension/model/scoring';

const sum = (o: Partial<QuestionSummary>): QuestionSummary => ({ regime: 'contested', overturn: false, gate: 0.5, mismatches: 0, label: '1', majorityLabel: '1', n: 8, digest: { degenerate: false, plurality: false, rescuedBy: [] }, ...o });

test('numbers are short and never NaN', () => {
  assert.equal(fmt(0.123456), '0.123');
  assert.equal(fmt(1), '1');
  assert.equal(fmt(0), '0');
  assert.equal(fmt(-0.5, 2), '-0.5');
  assert.equal(fmt(1e-9), '1.0e-9');
  assert.equal(fmt(null), '—');
  assert.equal(fmt(Number.NaN), '—');
});

test('question descriptions carry regime, gate, overturn and mismatch', () => {
  assert.equal(questionDescription(undefined), 'scoring…');
  assert.equal(questionDescription(sum({})), 'contested · gate 0.5');
  assert.equal(questionDescription(sum({ overturn: true, mismatches: 3, regime: 'competence-floor', gate: 0.714 })), 'competence floor · gate 0.71 · CoRE overturns · ≠ reward ×3');
});

test('status bar text', () => {
  const st = stepStats(12, [sum({ overturn: true, gate: 0.8 }), sum({ gate: 0.6 }), undefined]);
  assert.deepEqual({ ...st, meanGate: Number(st.meanGate!.toFixed(6)) }, { step: 12, groups: 3, overturns: 1, meanGate: 0.7, scored: 2 });
  assert.equal(statusText('run-a', st), '$(graph) run-a · step 12 · 3 groups · 1 overturns · gate 0.7');
  assert.equal(statusText('run-a', stepStats(null, [])), '$(graph) run-a: no groups yet');
});

test('the extracted answer is located in the response (last box wins)', () => {
  const text = 'first \\boxed{3} then \\boxed{4}. 4 again';
  assert.deepEqual(answerSpan(text, '4'), [text.lastIndexOf('\\boxed{4}'), text.lastIndexOf('\\boxed{4}') + 9]);
  assert.deepEqual(answerSpan('so \\boxed{}', ''), [3, 11]);
  assert.equal(answerSpan('nothing here', null), null);
  assert.equal(answerSpan('abc', 'zzz'), null);
});

test('the panel shell: CSP default-src none, a fresh nonce, no data', () => {
  const a = makeNonce();
  const b = makeNonce();
  assert.notEqual(a, b);
  assert.match(a, /^[A-Za-z0-9]{20,}$/);
  const csp = contentSecurityPolicy('vscode-resource:', a);
  assert.match(csp, /^default-src 'none'; /);
  assert.match(csp, new RegExp(`script-src 'nonce-${a}'`));
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  const html = panelHtml({ cspSource: 'https://x', scriptUri: 'https://x/main.js"><script>', styleUri: 'https://x/main.css', nonce: a });
  assert.equal((html.match(/<script/g) ?? []).length, 1, 'attribute values are escaped');
  assert.match(html, new RegExp(`<script nonce="${a}" src=`));
});

test('explorer filters and sort by gate', () => {
  const s: Record<string, QuestionSummary> = {
    a: sum({ regime: 'saturated', gate: 0.9 }),
    b: sum({ overturn: true, gate: 0.3 }),
    c: sum({ mismatches: 2, gate: 0.5 }),
  };
  const keys = ['a', 'b', 'c', 'd'];
  const get = (k: string) => s[k];
  assert.deepEqual(filterQuestions(keys, get, 'all', 'file'), keys);
  assert.deepEqual(filterQuestions(keys, get, 'contested', 'file'), ['b', 'c']);
  assert.deepEqual(filterQuestions(keys, get, 'overturns', 'file'), ['b']);
  assert.deepEqual(filterQuestions(keys, get, 'mismatches', 'file'), ['c']);
  assert.deepEqual(filterQuestions(keys, get, 'all', 'gate'), ['b', 'c', 'a', 'd'], 'unscored last');
});

test('explorer: sort by id is natural order of the question ids, whatever the log order', () => {
  // Keys are the index's (opaque) group keys; idOf maps them to question ids.
  const ids: Record<string, string> = { k1: 'math/q10', k2: 'math/q2', k3: 'math/q1', k4: 'aime/q3', k5: 'math/q2' };
  const keys = ['k1', 'k2', 'k3', 'k4', 'k5'];
  const sorted = filterQuestions(keys, () => undefined, 'all', 'id', (k) => ids[k]);
  assert.deepEqual(sorted.map((k) => ids[k]), ['aime/q3', 'math/q1', 'math/q2', 'math/q2', 'math/q10']);
  assert.deepEqual(sorted.slice(2, 4), ['k2', 'k5'], 'stable for equal ids');
  assert.deepEqual(filterQuestions(keys, () => undefined, 'all', 'file', (k) => ids[k]), keys);
});

test('show flips: the empty \\boxed{} class reads "(empty)", no label "(none)"', () => {
  assert.equal(flipDescription({ step: 3, before: '12', after: '' }), 'step 3: 12 → (empty)');
  assert.equal(flipDescription({ step: 1, before: null, after: '7' }), 'step 1: (none) → 7');
});

test('parameters: clamped to their ranges, unknown keys dropped, changes listed', () => {
  const d = defaultParams();
  assert.equal(d.kappa, 0.1);
  assert.equal(d.tau, 0.25);
  const p = sanitizeParams({ kappa: 7, tau: -1, tmax: 10.6, bogus: 3, alpha: Number.NaN });
  assert.equal(p.kappa, 1);
  assert.ok(p.tau > 0 && p.tau < 1e-3, 'τ > 0 (exclusive bound)');
  assert.equal(p.tmax, 11);
  assert.equal(p.alpha, 0.1);
  assert.ok(!('bogus' in p));
  assert.deepEqual(changedParams({ ...d, kappa: 0.5 }), { kappa: 0.5 });
});

test('re-score parameter text', () => {
  assert.deepEqual(parseParamText('kappa=0.5 tau=0.1'), { kappa: 0.5, tau: 0.1 });
  assert.deepEqual(parseParamText('tau-low=0.4, alpha=0.2'), { tauLow: 0.4, alpha: 0.2 });
  assert.deepEqual(parseParamText(''), {});
  assert.equal(parseParamText('kappa'), null);
  assert.equal(parseParamText('nonsense=1'), null);
  assert.deepEqual(parseRescoreText('core kappa=1'), { operator: 'core', params: { kappa: 1 } });
  assert.deepEqual(parseRescoreText('MS-TTRL lambda=0.5'), { operator: 'msttrl', params: { lambda: 0.5 } });
});
