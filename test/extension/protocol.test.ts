// The host validates every message from the webview (untrusted input).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isHostMessage, isQuestionKey, parseWebviewMessage } from '../../src/protocol/messages';

test('valid webview messages parse', () => {
  assert.deepEqual(parseWebviewMessage({ type: 'ready', state: null }), { type: 'ready', state: null });
  assert.deepEqual(parseWebviewMessage({ type: 'setParams', seq: 3, params: { kappa: 0.5 } }), { type: 'setParams', seq: 3, params: { kappa: 0.5 } });
  assert.deepEqual(parseWebviewMessage({ type: 'resetParams', seq: 4 }), { type: 'resetParams', seq: 4 });
  assert.deepEqual(parseWebviewMessage({ type: 'openRollout', index: 2 }), { type: 'openRollout', index: 2 });
  assert.deepEqual(parseWebviewMessage({ type: 'revealInLog', index: 0 }), { type: 'revealInLog', index: 0 });
  assert.deepEqual(parseWebviewMessage({ type: 'rendered', seq: 1, ms: 12.5 }), { type: 'rendered', seq: 1, ms: 12.5 });
});

test('restored state keeps a well-formed key and drops the rest', () => {
  const key = { runId: '/r', step: 3, questionId: 'q/1' };
  assert.deepEqual(parseWebviewMessage({ type: 'ready', state: { key, params: { kappa: 1 } } }), { type: 'ready', state: { key, params: { kappa: 1 } } });
  assert.deepEqual(parseWebviewMessage({ type: 'ready', state: { key: { runId: 1 }, params: { kappa: 'x' } } }), { type: 'ready', state: { key: null, params: null } });
  assert.deepEqual(parseWebviewMessage({ type: 'ready', state: 'junk' }), { type: 'ready', state: null });
});

test('malformed webview messages are rejected', () => {
  for (const m of [
    null,
    42,
    'ready',
    [],
    {},
    { type: 'nope' },
    { type: 'setParams', seq: 1, params: { kappa: Number.NaN } },
    { type: 'setParams', seq: 1, params: { kappa: '0.5' } },
    { type: 'setParams', params: { kappa: 0.5 } },
    { type: 'openRollout', index: -1 },
    { type: 'openRollout', index: 1.5 },
    { type: 'openRollout', index: '1' },
    { type: 'rendered', seq: 1, ms: Infinity },
    { type: '__proto__' },
  ]) {
    assert.equal(parseWebviewMessage(m), null, JSON.stringify(m));
  }
});

test('question keys and host messages are recognised', () => {
  assert.ok(isQuestionKey({ runId: 'a', step: 0, questionId: 'b' }));
  assert.ok(!isQuestionKey({ runId: 'a', step: '0', questionId: 'b' }));
  assert.ok(isHostMessage({ type: 'select', index: 1 }));
  assert.ok(isHostMessage({ type: 'tokenCurves', key: { runId: 'r', step: 1, questionId: 'q' }, rows: [], note: null }));
  assert.ok(!isHostMessage({ type: 'ready' }));
});

test('the dashboard\u2019s Compare with… message names a run, nothing else', async () => {
  const { parseDashMessage } = await import('../../src/protocol/dashboard-messages');
  assert.deepEqual(parseDashMessage({ type: 'compareWith', runId: '/runs/b' }), { type: 'compareWith', runId: '/runs/b' });
  assert.equal(parseDashMessage({ type: 'compareWith' }), null);
  assert.equal(parseDashMessage({ type: 'compareWith', runId: 3 }), null);
});
