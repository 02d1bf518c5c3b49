// Math-Verify's public test cases (huggingface/Math-Verify tests/, ported as data into
// test/answers/vectors/math-verify.jsonl with the source of each case): we agree with its verdicts
// on at least 97% of them, and the cases we decide differently are exactly the ones documented in
// docs/answers.md ("Differences from Math-Verify"), through the library and through the CLI.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { answersEqual, extractAnswer } from '../../src/engine/answers/answers';
import { clearAnswerCaches } from '../../src/engine/answers/classes';
import { runEqual } from '../../src/cli/equal';
import { runExtract } from '../../src/cli/extract-command';
import { captureIO } from './helpers';

interface MvCase {
  gold: string;
  pred: string;
  expected: boolean;
  config: { match_types: string[]; precision: number; strict: boolean; allow_set_relation_comp?: boolean };
  source: string;
  gold_is_response: boolean;
  pred_is_response: boolean;
  abridged?: boolean;
  math_verify_fails?: boolean;
}

const cases: MvCase[] = readFileSync(resolve(process.cwd(), 'test/answers/vectors/math-verify.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as MvCase);

// The work budget counts units, not time (docs/answers.md, "Work and size bounds"): these
// verdicts are the same on a loaded machine, with the default budget.
before(() => clearAnswerCaches());
after(() => clearAnswerCaches());

/** Math-Verify's number/expression fallback (ExprExtractionConfig) is our last-number fallback. */
const lastNumber = (c: MvCase): boolean => c.config.match_types.includes('expr');

function side(text: string, isResponse: boolean, c: MvCase): string | null {
  return isResponse ? extractAnswer(text, { lastNumber: lastNumber(c) }) : text;
}

function judged(c: MvCase): boolean {
  const g = side(c.gold, c.gold_is_response, c);
  const p = side(c.pred, c.pred_is_response, c);
  return g !== null && p !== null && answersEqual(g, p);
}

function documented(): number[] {
  const doc = readFileSync(resolve(process.cwd(), 'docs/answers.md'), 'utf8');
  const section = doc.split(/^## /m).find((s) => s.startsWith('Differences from Math-Verify'));
  assert.ok(section, 'docs/answers.md has a "Differences from Math-Verify" section');
  return [...section.matchAll(/^- case (\d+)\b/gm)].map((m) => Number(m[1])).sort((x, y) => x - y);
}

test('Math-Verify cases: every case names its source and config', () => {
  assert.ok(cases.length >= 250, `${cases.length} cases`);
  for (const c of cases) {
    assert.match(c.source, /^huggingface\/Math-Verify@[0-9a-f]{8} tests\/test_\w+\.py::\w+/);
    assert.equal(typeof c.expected, 'boolean');
    assert.ok(Array.isArray(c.config.match_types) && c.config.match_types.length > 0);
  }
});

test('Math-Verify cases: >= 97% agree; the differences are exactly the documented ones', () => {
  const wrong: number[] = [];
  cases.forEach((c, i) => {
    if (judged(c) !== c.expected) wrong.push(i + 1);
  });
  const agreement = 1 - wrong.length / cases.length;
  assert.ok(agreement >= 0.97, `agreement ${agreement} (${wrong.join(', ')})`);
  assert.deepEqual(wrong, documented());
});

test('Math-Verify cases through the CLI (extract, then equal --jsonl) agree with the library', async () => {
  const pairs: { a: string | null; b: string | null }[] = [];
  for (const c of cases) {
    const read = async (text: string, isResponse: boolean): Promise<string | null> => {
      if (!isResponse) return text;
      const io = captureIO(text);
      assert.equal(await runExtract(lastNumber(c) ? ['-'] : ['-', '--no-last-number'], io.io), 0);
      return JSON.parse(io.out()) as string | null;
    };
    pairs.push({ a: await read(c.gold, c.gold_is_response), b: await read(c.pred, c.pred_is_response) });
  }
  const io = captureIO(pairs.map((p) => JSON.stringify(p)).join('\n') + '\n');
  assert.equal(await runEqual(['--jsonl', '-'], io.io), 0);
  const outs = io.out().trim().split('\n').map((l) => (JSON.parse(l) as { equal: boolean }).equal);
  assert.deepEqual(outs, cases.map(judged));
});
