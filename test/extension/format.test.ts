// Formatting for the explorer, the status bar, roll-out documents, and the panel's HTML shell.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerSpan, fmt, questionDescription, statusText, stepStats } from '../../src/extension/format';
import { contentSecurityPolicy, makeNonce, panelHtml } from '../../src/extension/html';
import { filterQuestions } from '../../src/extension/filters';
import { changedParams, defaultParams, sanitizeParams } from '../../src/extension/params';
import { parseParamText, parseRescoreText } from '../../src/extension/paramText';
import type { QuestionSummary } from '../../src/extension/scoring';

const sum = (o: Partial<QuestionSummary>): QuestionSummary => ({ regime: 'contested', overturn: false, gate: 0.5, mismatches: 0, label: '1', majorityLabel: '1', n: 8, ...o });

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
  assert.deepEqual(filterQuestions(keys, get, 'all', 'id'), keys);
  assert.deepEqual(filterQuestions(keys, get, 'contested', 'id'), ['b', 'c']);
  assert.deepEqual(filterQuestions(keys, get, 'overturns', 'id'), ['b']);
  assert.deepEqual(filterQuestions(keys, get, 'mismatches', 'id'), ['c']);
  assert.deepEqual(filterQuestions(keys, get, 'all', 'gate'), ['b', 'c', 'a', 'd'], 'unscored last');
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
