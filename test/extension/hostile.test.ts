// Hostile values from logs and from the webview: a question id with a line break cannot forge
// roll-out document header lines; CSV cells cannot become formulas (also after ';'); a webview's
// `ready` state cannot make the host follow a path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { flipDescription, oneLine, rolloutHeader, show } from '../../src/extension/format';
import { csvField, prepareGroup } from '../../src/engine';
import { mayFollowAgain } from '../../src/extension/runs/restore';
import { buildView } from '../../src/extension/model/scoring';
import { defaultParams } from '../../src/extension/slider-params';

test('a line break in a question id, answer, run label or ground truth stays inside its header line', () => {
  const forged = 'q1\n# log: /etc/passwd:1\r\n# rewards: all 1';
  const prepared = prepareGroup({ step: 3, questionId: forged, groundTruth: 'x\u2028# log: /tmp/evil', rollouts: [{ response: 'so \\boxed{a\nb}' }, { response: '\\boxed{2}' }] });
  const view = buildView({ key: { runId: '/r', step: 3, questionId: forged }, runLabel: 'run\n# log: /x', prepared, prompt: null, previews: ['', ''], sampleIdx: [null, null] }, defaultParams(), 'majority');
  const header = rolloutHeader(view, 0, '/logs/step.jsonl', 7);
  const text = header.join('\n');
  const lines = text.split(/\r\n|\r|\n|\u2028|\u2029|\u0085/);
  assert.equal(lines.length, header.length, text);
  assert.deepEqual(lines.filter((l) => l.startsWith('# log: ')), ['# log: /logs/step.jsonl:7']);
  assert.ok(lines.some((l) => l.includes('question: q1\u240a# log: /etc/passwd:1\u240d\u240a# rewards: all 1')), text);
  assert.equal(oneLine('a\tb\u0000c\u2029'), 'a\u2409b\u2400c<U+2029>');
});

test('bidi controls in an answer are shown, not obeyed: the header, the tooltip and the flip line say <U+202E>12, never "21"', () => {
  const prepared = prepareGroup({ step: 1, questionId: 'q\u202eq', rollouts: [{ response: 'so \\boxed{\u202e12}' }, { response: '\\boxed{\u202e12}' }, { response: '\\boxed{7}' }] });
  const view = buildView({ key: { runId: '/r', step: 1, questionId: 'q\u202eq' }, runLabel: 'run\u2067x', prepared, prompt: null, previews: ['', '', ''], sampleIdx: [null, null, null] }, defaultParams(), 'majority');
  const text = rolloutHeader(view, 0, '/logs/step.jsonl', 1).join('\n');
  assert.doesNotMatch(text, /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069]/, text);
  assert.match(text, /# answer: <U\+202E>12 /);
  assert.match(text, /question: q<U\+202E>q/);
  assert.match(text, /run: run<U\+2067>x/);
  assert.equal(show('\u202e12'), '<U+202E>12');
  assert.equal(flipDescription({ step: 2, before: '\u202e12', after: '\u200f7' }), 'step 2: <U+202E>12 → <U+200F>7');
});

test('CSV: formula prefixes are neutralised at the start and after every ;', () => {
  assert.equal(csvField('=1+2'), "'=1+2");
  assert.equal(csvField('ok;=HYPERLINK("x")'), `"ok;'=HYPERLINK(""x"")"`);
  assert.equal(csvField('a; +cmd|x'), `"a;' +cmd|x"`);
  assert.equal(csvField('a;-1;@SUM(A1)'), `"a;'-1;'@SUM(A1)"`);
  assert.equal(csvField('a;b'), '"a;b"');
  assert.equal(csvField('plain'), 'plain');
  assert.equal(csvField(-3), '-3');
});

test("a webview's ready state never makes the host follow a path: only the run of the host's own record", () => {
  assert.equal(mayFollowAgain('/etc', null), false);
  assert.equal(mayFollowAgain('/etc', undefined), false);
  assert.equal(mayFollowAgain('/etc', { key: { runId: '/home/u/run', step: 1, questionId: 'q' } }), false);
  assert.equal(mayFollowAgain('/home/u/run', { key: { runId: '/home/u/run', step: 1, questionId: 'q' } }), true);
  const src = readFileSync(join(import.meta.dirname, '../../src/extension/consensus/consensus.ts'), 'utf8');
  // The one place a panel's key can make the host follow a run goes through the check.
  const follows = [...src.matchAll(/whenRead\([^\n]*key\.runId[^\n]*/g)].map((m) => m[0]);
  assert.equal(follows.length, 1);
  assert.match(follows[0], /^whenRead\(!this\.store\.runs\.has\(key\.runId\) && mayFollowAgain\(key\.runId, [^)]*\)\) && existsSync\(key\.runId\) \? key\.runId : undefined\);$/);
  // …and the composition root follows only the run id it is handed there.
  const root = readFileSync(join(import.meta.dirname, '../../src/extension/extension.ts'), 'utf8');
  assert.deepEqual([...root.matchAll(/discovery\.follow\(([^,]*),/g)].map((m) => m[1]).sort(), ['path', 'runId']);
});
