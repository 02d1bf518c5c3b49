// The run index reads lines as bytes and leaves the roll-out texts out (src/logs/skeleton.ts).
// Checked against JSON.parse of the decoded line: on real-format lines (native group and roll-out
// records, verl, NeMo RL) with escapes, non-ASCII text, invalid UTF-8, NaN tokens, keys written
// with escapes, duplicate keys; on every prefix of such lines (a writer mid-line); on malformed
// lines; and on random JSON. Then JsonlFileParser.lineBytes against JsonlFileParser.line: the same
// records (texts "") and the same notices, and the index over a followed file written in pieces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isBlankLine, skeletonOf, skeletonSync, SKELETON_STEP, ELIDED_ITEM_RESPONSE, ELIDED_OUTPUT, ELIDED_RESPONSE } from '../../src/logs/skeleton.js';
import { decodeLine, readLineBatches, readRawLineBatches, type RawLine } from '../../src/logs/lines.js';
import { JsonlFileParser, lineStart } from '../../src/logs/parse.js';
import { parseJsonLine } from '../../src/logs/json.js';
import { RunIndex, rolloutsOf, type Notice } from '../../src/logs/log-layer.js';
import { tempDir, write } from './helpers.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the skeleton should parse to: JSON.parse's value with the left-out texts as "". */
function elided(v: unknown): unknown {
  if (!isObj(v)) return v;
  const o: Obj = { ...v };
  for (const k of ['response', 'output']) if (typeof o[k] === 'string') o[k] = '';
  if (Array.isArray(o.rollouts)) o.rollouts = o.rollouts.map((r) => (isObj(r) && typeof r.response === 'string' ? { ...r, response: '' } : r));
  return o;
}

/** JSON.parse's verdict on the decoded bytes, and the skeleton's. */
function check(bytes: Buffer, what: string): void {
  let expected: { ok: true; value: unknown } | { ok: false };
  try {
    expected = { ok: true, value: JSON.parse(bytes.toString('utf8')) };
  } catch {
    expected = { ok: false };
  }
  const sk = skeletonSync(bytes);
  let got: { ok: true; value: unknown } | { ok: false };
  try {
    got = sk ? { ok: true, value: JSON.parse(sk.text) } : { ok: false };
  } catch {
    got = { ok: false };
  }
  assert.equal(got.ok, expected.ok, `${what}: valid ${expected.ok}, skeleton says ${got.ok}`);
  if (expected.ok && got.ok) assert.deepEqual(got.value, elided(expected.value), what);
}

const TEXTS = [
  'so the answer is \\boxed{4}',
  'line one\nline two\ttab "quoted" back\\slash /slash \b\f\r',
  'non-ASCII: é … 。 ∑ 数学 😀 \u2028 \u00a0',
  'lone surrogates \ud800 \udfff',
  '<script>alert(1)</script></textarea>',
  'control \u0001\u001f\u007f',
  '',
  'NaN Infinity -Infinity',
  '{"nested": "json in text", "response": "x"}',
];

function realLines(): Buffer[] {
  const out: string[] = [];
  for (const [i, t] of TEXTS.entries()) {
    out.push(JSON.stringify({ kind: 'group', step: i, question_id: `q${i}`, prompt: `p ${t}`, ground_truth: '4', rollouts: TEXTS.map((u, j) => ({ response: u + t, mean_logprob: -0.1 * j, reward: j % 2, answer: j % 3 ? '4' : null, extra: { response: t, k: [1, { response: u }] } })) }));
    out.push(JSON.stringify({ kind: 'rollout', step: i, question_id: `q${i}`, sample_idx: i, response: t, mean_logprob: -0.5, verification: { valid: true, tool_output: t } }));
    out.push(JSON.stringify({ input: `prompt ${t}`, output: t, gts: ['4', '4.0'], score: 1, step: i, uid: `u_${i}_0`, response: t, acc: true }));
    out.push(JSON.stringify({ content: [[`user ${t}`, t]], rewards: [1], generation_logprobs: [[-0.1, -0.2]], input_lengths: [3], response: t }));
  }
  // written by hand: keys with escapes, duplicate keys, a non-string response, white space, NaN
  out.push('{"kind":"rollout","step":1,"question_id":"e","respons\\u0065":"hidden \\" text","mean_logprob":-0.1}');
  out.push('{"kind":"rollout","step":1,"question_id":"d","response":"first","response":"second"}');
  out.push('{"kind":"rollout","step":1,"question_id":"d","response":"text","response":7}');
  out.push('{"kind":"rollout","step":1,"question_id":"n","response":5}');
  out.push('  { "kind" : "group" , "step" : 1 , "question_id" : "w" , "rollouts" : [ { "response" : "a" } , 3 , [ { "response" : "x" } ] , { "response" : null } ] }  ');
  out.push('{"rollouts": {"response": "an object, not an array: kept"}, "x": {"rollouts": [{"response": "deeper: kept"}]}}');
  out.push('[{"response": "a top-level array: kept"}]');
  out.push('"a string"');
  out.push('{"kind":"rollout","step":1,"question_id":"nan","response":"NaN","mean_logprob":NaN}');
  out.push('{"a":1}{"b":2}');
  out.push('{"response":"x"} trailing');
  out.push('{"response":"\\u00e9\\uD83D\\uDE00\\/"}');
  return out.map((s) => Buffer.from(s));
}

function malformedLines(): Buffer[] {
  return [
    '{"response":"bad escape \\x"}',
    '{"response":"bad unicode \\u12g4"}',
    '{"response":"short unicode \\u12"}',
    '{"response":"raw tab \t inside"}',
    '{"response":"raw control \u0001 inside"}',
    '{"output":"raw CR \r inside"}',
    '{"rollouts":[{"response":"raw \u0000 NUL"}]}',
    '{"kept":"raw tab \t inside"}',
    '{"response":"unterminated}',
    '{"response":"ends in a backslash\\',
    '{"response":"x",}',
    '{"response":"x" "y"}',
    '{response:"x"}',
    '{"a":[1,2}',
    '{"a":1]]',
    '}{',
    '{"a":1}}',
  ].map((s) => Buffer.from(s));
}

test('skeleton: the same value as JSON.parse with the texts left out, on real-format lines', () => {
  for (const b of realLines()) check(b, b.toString().slice(0, 80));
  assert.equal(skeletonSync(realLines()[0])!.elided, ELIDED_ITEM_RESPONSE);
  const group = Buffer.from(JSON.stringify({ kind: 'group', step: 1, question_id: 'd', rollouts: [{ response: 'so \\boxed{4}' + '…'.repeat(1000), mean_logprob: -1 }, { response: '!'.repeat(3000) }] }));
  const sk = skeletonSync(group)!;
  assert.equal(sk.text, '{"kind":"group","step":1,"question_id":"d","rollouts":[{"response":"","mean_logprob":-1},{"response":""}]}');
  assert.equal(skeletonSync(realLines()[2])!.elided, ELIDED_OUTPUT | ELIDED_RESPONSE);
  assert.equal(skeletonSync(realLines()[3])!.elided, ELIDED_RESPONSE);
});

test('skeleton: invalid UTF-8 and a byte-order mark give the same U+FFFD characters and errors as decoding', () => {
  const bad = [Buffer.from([0xff]), Buffer.from([0xe2, 0x80]), Buffer.from([0xc3]), Buffer.from([0xf0, 0x9f, 0x98])];
  for (const x of bad) {
    for (const [pre, post] of [['{"kind":"rollout","response":"', '","prompt":"p'], ['{"prompt":"', '","response":"t'], ['{"rollouts":[{"response":"', '"}],"q":"x']]) {
      check(Buffer.concat([Buffer.from(pre), x, Buffer.from(post), x, Buffer.from('"}')]), `${pre} ${x.toString('hex')}`);
    }
    check(Buffer.concat([Buffer.from('{"a":1,'), x, Buffer.from('}')]), `outside strings: ${x.toString('hex')}`);
  }
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"response":"x","step":1}')]);
  assert.equal(skeletonSync(bom)!.text.charCodeAt(0), 0xfeff, 'from 0 the mark stays (JSON.parse rejects it)');
  assert.deepEqual(JSON.parse(skeletonSync(bom, 3)!.text), { response: '', step: 1 });
});

test('skeleton: malformed lines and every prefix of a line (a writer mid-line) are invalid exactly when JSON.parse says so', () => {
  for (const b of malformedLines()) check(b, b.toString());
  for (const b of realLines()) {
    for (let n = 0; n < b.length; n += b.length > 400 ? 7 : 1) check(b.subarray(0, n), `prefix ${n} of ${b.toString().slice(0, 40)}`);
  }
});

test('skeleton: random JSON lines (seeded) parse to what JSON.parse gives, texts left out', () => {
  let seed = 12345;
  const rnd = (): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const str = (): string => Array.from({ length: Math.floor(rnd() * 12) }, () => pick(['a', '"', '\\', '\n', 'é', '…', '😀', '\u0001', '}', ']', ',', ':', ' ', '\ud800'])).join('');
  const value = (d: number): unknown => {
    const r = rnd();
    if (d > 3 || r < 0.3) return pick([1, -2.5e3, true, false, null, str()]);
    if (r < 0.6) return Array.from({ length: Math.floor(rnd() * 4) }, () => value(d + 1));
    const o: Obj = {};
    for (let i = Math.floor(rnd() * 5); i > 0; i--) o[pick(['response', 'output', 'rollouts', 'kind', 'x', str()])] = pick(['rollouts', 'response']) === 'rollouts' && rnd() < 0.3 ? [{ response: str() }, value(d + 1)] : value(d + 1);
    return o;
  };
  for (let i = 0; i < 3000; i++) {
    const v = value(0);
    const line = Buffer.from(JSON.stringify(isObj(v) || rnd() < 0.8 ? { ...(isObj(v) ? v : {}), rollouts: [{ response: str(), n: i }, value(1)] } : v));
    check(line, line.toString());
    // a cut anywhere
    check(line.subarray(0, Math.floor(rnd() * line.length)), `cut ${line.toString()}`);
  }
});

test('skeleton: a long text is scanned in steps (the caller can yield between them)', () => {
  const line = Buffer.from(JSON.stringify({ kind: 'group', step: 1, question_id: 'd', rollouts: Array.from({ length: 4 }, (_, i) => ({ response: 'the answer is 4' + '…'.repeat(200_000), mean_logprob: -i })) }));
  const it = skeletonOf(line);
  let steps = 0;
  let r = it.next();
  while (!r.done) {
    steps++;
    r = it.next();
  }
  assert.ok(steps >= Math.floor(line.length / SKELETON_STEP) - 1, `${steps} steps for ${line.length} bytes`);
  assert.deepEqual(JSON.parse(r.value!.text), elided(JSON.parse(line.toString())));
});

test('isBlankLine is text.trim() === "" of the decoded line', () => {
  for (const s of ['', ' ', '\t\r\v\f', '\u00a0', '\ufeff', '\u2028\u3000 ', ' x', '\u00a0x', '\ufeff{}', ' '.repeat(300) + '\u00a0'.repeat(300) + 'x', '\u00a0'.repeat(200) + '\u2000', '…']) {
    assert.equal(isBlankLine(Buffer.from(s)), s.trim() === '', JSON.stringify(s));
  }
  assert.equal(isBlankLine(Buffer.from([0x20, 0xff])), false);
});

/** Every line of `text` through both parser entry points: records and notices. */
function bothWays(text: Buffer, file = '/run/log.jsonl'): void {
  const run = (useBytes: boolean) => {
    const notices: Notice[] = [];
    const p = new JsonlFileParser('/run', file, (n) => notices.push(n));
    const records: unknown[] = [];
    let offset = 0;
    let line = 1;
    for (;;) {
      const nl = text.indexOf(10, offset);
      const end = nl === -1 ? text.length : nl;
      const bytes = text.subarray(offset, end > offset && text[end - 1] === 13 ? end - 1 : end);
      const raw: RawLine = { bytes, offset, length: bytes.length, line, terminated: nl !== -1, end: nl === -1 ? end : end + 1 };
      const rec = useBytes ? p.lineBytes(raw, skeletonSync(bytes, lineStart(raw))) : p.line(decodeLine(raw));
      records.push(rec === undefined ? undefined : JSON.parse(JSON.stringify(rec)));
      if (nl === -1) break;
      offset = nl + 1;
      line++;
    }
    p.finish();
    return { records, notices, format: p.format, skipped: p.skipped };
  };
  const whole = run(false);
  const bytes = run(true);
  // the byte path's records are the text path's with the roll-out texts as ""
  const noTexts = (r: unknown): unknown => {
    if (!isObj(r)) return r;
    if (r.kind === 'group') return { ...r, rollouts: (r.rollouts as Obj[]).map((x) => ({ ...x, response: '' })) };
    return { ...r, rollout: { ...(r.rollout as Obj), response: '' } };
  };
  // (a line of a format that reads a left-out key is parsed whole: its texts are there)
  assert.deepEqual(bytes.records.map(noTexts), whole.records.map(noTexts));
  if (whole.format === 'native') assert.deepEqual(bytes.records, whole.records.map(noTexts), 'native: no text in the records');
  assert.deepEqual(bytes.notices, whole.notices);
  assert.equal(bytes.format, whole.format);
  assert.equal(bytes.skipped, whole.skipped);
}

test('lineBytes gives line\'s records (texts "") and notices: native, verl, NeMo RL, malformed, NaN, bad UTF-8, BOM, CRLF', () => {
  const lines = realLines();
  const native = lines.filter((_, i) => i % 4 < 2 && i < TEXTS.length * 4);
  const verl = lines.filter((_, i) => i % 4 === 2 && i < TEXTS.length * 4);
  const nemo = lines.filter((_, i) => i % 4 === 3 && i < TEXTS.length * 4);
  const nl = Buffer.from('\n');
  const join = (bs: Buffer[]) => Buffer.concat(bs.flatMap((b) => [b, nl]));
  const extraNative = [
    Buffer.from('{"kind":"rollout","step":1,"question_id":"nan","response":"x","mean_logprob":NaN}'),
    Buffer.concat([Buffer.from('{"kind":"rollout","step":1,"question_id":"u","response":"bad '), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
    Buffer.from('{"kind":"rollout","step":"x","question_id":"s","response":"bad step"}'),
    Buffer.from('{"kind":"group","step":1,"question_id":"g","rollouts":[{"response":5}]}'),
    Buffer.from('{"kind":"group","step":1,"question_id":"g2","rollouts":[{"response":"x","mean_logprob":"high"}]}'),
    Buffer.from('   '),
    Buffer.from('\u00a0'),
    ...malformedLines(),
  ];
  bothWays(join([...native, ...extraNative]));
  bothWays(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), join(native)]));
  bothWays(Buffer.from(join(native).toString().replace(/\n/g, '\r\n')));
  bothWays(join([...verl, ...extraNative]), '/run/3.jsonl');
  bothWays(join([...nemo, ...extraNative]), '/run/nemo.jsonl');
  // malformed lines first, then the records (format detection after skipped lines)
  bothWays(join([...malformedLines().slice(0, 3), ...native]));
  bothWays(join([...malformedLines()]));
  // a last line without a newline
  bothWays(Buffer.concat([join(native), lines[0]]));
});

test('readRawLineBatches: bytes, offsets and lengths of each line (CRLF, lines across chunks, a last line without newline)', async () => {
  const content = Buffer.from('{"a":1}\r\n' + 'x'.repeat(50) + '\n\n…é\r\n{"b":"' + 'y'.repeat(30) + '"}');
  const fh = { read: async (buf: Buffer, off: number, len: number, pos: number) => ({ bytesRead: content.copy(buf, off, pos, Math.min(content.length, pos + len)) }) };
  for (const chunk of [1, 3, 7, 64, 1 << 20]) {
    const raw: RawLine[] = [];
    for await (const b of readRawLineBatches(fh, 0, 1, content.length, chunk)) for (const l of b) raw.push({ ...l, bytes: Buffer.from(l.bytes) });
    assert.deepEqual(raw.map((l) => [l.line, l.offset, l.length, l.terminated, l.bytes.toString()]), [
      [1, 0, 7, true, '{"a":1}'],
      [2, 9, 50, true, 'x'.repeat(50)],
      [3, 60, 0, true, ''],
      [4, 61, 5, true, '…é'],
      [5, 68, 38, false, '{"b":"' + 'y'.repeat(30) + '"}'],
    ]);
    for (const l of raw) assert.ok(content.subarray(l.offset, l.offset + l.length).equals(l.bytes));
    const text: string[] = [];
    for await (const b of readLineBatches(fh, 0, 1, content.length, chunk)) for (const l of b) text.push(l.text);
    assert.deepEqual(text, raw.map((l) => l.bytes.toString()));
  }
});

test('the index over a followed file that a writer appends a long group record to in pieces: the group once the line is whole, the same as a one-shot read', async () => {
  const { dir, cleanup } = tempDir();
  const FILLERS = [' ', '!', '…', '$', '。', '.', '\\', '}', '"'];
  const line = (q: number) =>
    JSON.stringify({
      kind: 'group',
      step: 1,
      question_id: `degenerate/${q}`,
      rollouts: Array.from({ length: 8 }, (_, i) => ({ response: `the answer is ${i % 3 ? 4 : 5}` + FILLERS[(q + i) % FILLERS.length].repeat(40_000), mean_logprob: -0.1 - 0.01 * i, answer: i % 2 ? null : String(i % 3 ? 4 : 5) })),
    });
  const f = join(dir, 'degenerate.jsonl');
  let idx: RunIndex | undefined;
  try {
    write(dir, 'degenerate.jsonl', '');
    const notices: Notice[] = [];
    idx = await RunIndex.open(dir, { follow: true, poll: true, pollMs: 40, idleMs: 200, onNotice: (n) => notices.push(n) });
    const whole = line(0) + '\n' + line(1) + '\n';
    const cut = [Math.floor(whole.length / 3), Math.floor(whole.length / 2) + 5, whole.length];
    let at = 0;
    for (const c of cut) {
      appendFileSync(f, whole.slice(at, c));
      at = c;
      await new Promise((r) => setTimeout(r, 150));
      await idx.settled();
      const seen: string[] = idx.groups().map((g) => g.questionId);
      if (c === cut[0]) assert.deepEqual(seen, [], 'a third of the first line: nothing yet');
      if (c === cut[1]) assert.deepEqual(seen, ['degenerate/0']);
    }
    await new Promise((r) => setTimeout(r, 150));
    await idx.settled();
    assert.deepEqual(idx.groups().map((g) => g.questionId), ['degenerate/0', 'degenerate/1']);
    const once = await RunIndex.open(dir, { follow: false, onNotice: () => undefined });
    // versions are process-wide (each index took its own)
    assert.deepEqual(JSON.parse(JSON.stringify(idx.groups().map((g) => ({ ...g, complete: true, version: 0 })))), JSON.parse(JSON.stringify(once.groups().map((g) => ({ ...g, version: 0 })))));
    for (const e of idx.groups()) {
      const g = await idx.loadGroup(e.key);
      const texts = (JSON.parse(whole.split('\n')[Number(e.questionId.slice(-1))]).rollouts as Array<{ response: string }>).map((r) => r.response);
      assert.deepEqual(g.rollouts.map((r) => r.response), texts);
    }
    assert.deepEqual(notices.filter((n) => n.level !== 'info'), []);
    once.close();
    // the same content, one-shot, line by line through JSON.parse of the text
    writeFileSync(join(dir, 'degenerate.jsonl'), whole);
    const p = new JsonlFileParser(dir, f, () => undefined);
    const viaText = whole.trim().split('\n').map((t, i) => p.line({ text: t, offset: 0, length: 0, line: i + 1, terminated: true, badUtf8: false, end: 0 }));
    assert.deepEqual(viaText.map((r) => r && r.kind === 'group' && r.rollouts.map((x) => [x.meanLogprob, x.answer ?? null])), idx.groups().map((g) => rolloutsOf(g).map((r) => [r.meanLogprob, r.answer])));
    assert.equal(parseJsonLine(skeletonSync(Buffer.from(line(2)))!.text).nonFinite, false);
  } finally {
    idx?.close();
    cleanup();
  }
});
