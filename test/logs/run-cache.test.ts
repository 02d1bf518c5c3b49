// The persisted run cache (src/logs/cache): a second report/sweep/health on an unchanged run reads
// features from the cache and gives the same output as a fresh read; a run whose files were
// appended to, replaced, rewritten (even to the same length) or deleted is read again; a corrupt or
// foreign cache file is detected and rebuilt, never trusted.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { runReport } from '../../src/cli/report.js';
import { runScore } from '../../src/cli/score-command.js';
import { runSweep } from '../../src/cli/sweep-command.js';
import { runHealth } from '../../src/cli/health.js';
import { openRunCache, checkCache, cacheKey, fileIdentity, readCachedGroup } from '../../src/logs/cache/cached-run.js';
import { listRunFiles, readRun } from '../../src/logs/log-layer.js';
import { jsonl, write } from './helpers.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tmp = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p));
  dirs.push(d);
  return d;
};

function group(step: number, qid: string, answers: string[], truth?: string): Record<string, unknown> {
  return {
    kind: 'group',
    step,
    question_id: qid,
    ...(truth !== undefined ? { ground_truth: truth } : {}),
    rollouts: answers.map((a, i) => ({ response: `reasoning ${i} about ${qid} with some words: the answer is \\boxed{${a}}`, mean_logprob: -0.2 - i * 0.01, reward: a === truth ? 1 : 0 })),
  };
}

function writeRun(dir: string): void {
  write(dir, 'step1.jsonl', jsonl([group(1, 'q1', ['1', '1', '1', '2'], '1'), group(1, 'q2', ['3', '4', '4', '5'], '3')]));
  write(dir, 'step2.jsonl', jsonl([group(2, 'q1', ['1', '1', '2', '2'], '1'), group(2, 'q2', ['7', '7', '7', '8'], '7')]));
  // verl roll-out records: groups assembled from lines
  write(dir, 'rollout/3.jsonl', jsonl(['a', 'b'].flatMap((p) => [0, 1, 2].map((i) => ({ input: p, output: `${p} ${i} \\boxed{${i % 2}}`, score: i % 2, step: 3 })))));
}

async function run(cmd: 'score' | 'report' | 'sweep' | 'health', args: string[], env: string): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  const io = { stdin: new PassThrough(), stdout, stderr };
  const before = process.env.CONSENSUS_LENS_CACHE_DIR;
  process.env.CONSENSUS_LENS_CACHE_DIR = env;
  try {
    const f = cmd === 'score' ? runScore : cmd === 'report' ? runReport : cmd === 'sweep' ? runSweep : runHealth;
    const code = await f([...args, '--jobs', '0'], io);
    return { code, out, err };
  } finally {
    if (before === undefined) delete process.env.CONSENSUS_LENS_CACHE_DIR;
    else process.env.CONSENSUS_LENS_CACHE_DIR = before;
  }
}

const COMMANDS: Array<['score' | 'report' | 'sweep' | 'health', string[]]> = [
  ['score', ['--operators', 'majority,ec,core']],
  ['score', []],
  ['report', ['--operators', 'majority,ec,core']],
  ['sweep', ['--kappa', '0.1,1', '--operators', 'core']],
  ['health', ['--json']],
];

/** Each command's output through the cache equals its output without it. */
async function sameAsFresh(dir: string, cache: string): Promise<void> {
  for (const [cmd, args] of COMMANDS) {
    const cached = await run(cmd, [dir, ...args], cache);
    const fresh = await run(cmd, [dir, ...args, '--no-cache'], cache);
    assert.equal(cached.code, fresh.code, cmd);
    assert.equal(cached.out, fresh.out, `${cmd}: output through the cache`);
  }
}

const cacheFiles = (cache: string) => readdirSync(cache).filter((f) => f.endsWith('.clc'));

test('an unchanged run is read from its cache (no texts), with the same report, sweep and health', async () => {
  const dir = tmp('cl-cache-run-');
  const cache = tmp('cl-cache-');
  writeRun(dir);
  await sameAsFresh(dir, cache); // the first pass writes the cache
  assert.equal(cacheFiles(cache).length, 1);
  const c = await openRunCache(dir, () => undefined, {}, { dir: cache });
  assert.equal(c.state, 'hit');
  const groups = [];
  for await (const g of c.groups) groups.push(g);
  assert.equal(groups.length, 6);
  // features, not texts
  assert.ok(groups.every((g) => g.prepared?.hasReasoning && g.prepared.text && g.rollouts.every((r) => r.response === '')));
  // and the same groups as a fresh read
  const fresh = [];
  for await (const g of readRun(dir, () => undefined)) fresh.push(g);
  assert.deepEqual(groups.map((g) => [g.step, g.questionId, g.rollouts.map((r) => [r.reward, r.meanLogprob, r.source])]), fresh.map((g) => [g.step, g.questionId, g.rollouts.map((r) => [r.reward, r.meanLogprob, r.source])]));
  // one group at random
  const key = cacheKey(dir, { groundTruth: 'auto' });
  const files = (await listRunFiles(dir, () => undefined)).map((f) => fileIdentity(f));
  const check = checkCache(join(cache, `${key}.clc`), key, files);
  assert.ok(check.ok);
  if (check.ok) assert.equal(readCachedGroup(join(cache, `${key}.clc`), check.footer, 4).questionId, groups[4].questionId);
  await sameAsFresh(dir, cache); // the second pass reads the cache (report: its rows at this setting)
  // another setting: the report scores the cached features
  const other = await run('report', [dir, '--operators', 'majority,cisc,core', '--kappa', '0.5'], cache);
  const otherFresh = await run('report', [dir, '--operators', 'majority,cisc,core', '--kappa', '0.5', '--no-cache'], cache);
  assert.equal(other.out, otherFresh.out);
  assert.equal(readdirSync(cache).filter((f) => f.endsWith('.clr')).length, 2, 'the rows of each setting');
});

test('appended, replaced, rewritten (same length) and deleted files: the run is read again, never a stale number', async () => {
  const dir = tmp('cl-cache-run-');
  const cache = tmp('cl-cache-');
  writeRun(dir);
  await sameAsFresh(dir, cache);
  // appended
  appendFileSync(join(dir, 'step2.jsonl'), jsonl([group(2, 'q3', ['5', '5', '6', '6'], '6')]));
  assert.equal((await openRunCache(dir, () => undefined, {}, { dir: cache })).state, 'miss');
  await sameAsFresh(dir, cache);
  assert.equal((await openRunCache(dir, () => undefined, {}, { dir: cache })).state, 'hit');
  // replaced (renamed over)
  write(dir, 'new.part', jsonl([group(1, 'q1', ['9', '9', '9', '2'], '1'), group(1, 'q2', ['3', '3', '4', '5'], '3')]));
  renameSync(join(dir, 'new.part'), join(dir, 'step1.jsonl'));
  assert.equal((await openRunCache(dir, () => undefined, {}, { dir: cache })).state, 'miss');
  await sameAsFresh(dir, cache);
  // rewritten in place to the same length, modification time put back
  const f = join(dir, 'step1.jsonl');
  const st = statSync(f);
  const text = readFileSync(f, 'utf8');
  const changed = text.replace('\\\\boxed{9}', '\\\\boxed{8}');
  assert.notEqual(changed, text);
  assert.equal(changed.length, text.length);
  writeFileSync(f, changed);
  utimesSync(f, st.atime, st.mtime);
  assert.equal((await openRunCache(dir, () => undefined, {}, { dir: cache })).state, 'miss');
  const r = await run('report', [dir, '--operators', 'majority'], cache);
  assert.match(r.out, /\n/);
  await sameAsFresh(dir, cache);
  // deleted
  rmSync(join(dir, 'step2.jsonl'));
  assert.equal((await openRunCache(dir, () => undefined, {}, { dir: cache })).state, 'miss');
  await sameAsFresh(dir, cache);
});

test('a corrupt, truncated or foreign cache file is detected and rebuilt, never trusted', async () => {
  const dir = tmp('cl-cache-run-');
  const cache = tmp('cl-cache-');
  writeRun(dir);
  await sameAsFresh(dir, cache);
  const [name] = cacheFiles(cache);
  const file = join(cache, name);
  const good = readFileSync(file);
  const damaged: Array<[string, Buffer, RegExp]> = [];
  // a byte flipped inside a record (the cosines, say): the checksum catches it
  const flipped = Buffer.from(good);
  flipped[Math.floor(good.length / 3)] ^= 0x40;
  damaged.push(['flipped', flipped, /corrupt|footer/]);
  damaged.push(['truncated', good.subarray(0, good.length - 100), /truncated|not a consensus-lens cache|footer/]);
  damaged.push(['foreign', Buffer.from('{"not": "a cache"}\n'.repeat(20)), /not a consensus-lens cache/]);
  // another run's cache under this name
  const other = tmp('cl-cache-run-');
  cpSync(dir, other, { recursive: true });
  const otherCache = tmp('cl-cache-');
  await run('report', [other], otherCache);
  damaged.push(['another run', readFileSync(join(otherCache, cacheFiles(otherCache)[0])), /another run/]);
  for (const [what, bytes, why] of damaged) {
    writeFileSync(file, bytes);
    const notices: string[] = [];
    const c = await openRunCache(dir, (n) => notices.push(n.message), {}, { dir: cache });
    assert.equal(c.state, 'miss', what);
    assert.ok(notices.some((m) => why.test(m)), `${what}: ${notices.join('; ')}`);
    await sameAsFresh(dir, cache);
    assert.ok(readFileSync(file).equals(good) || (await openRunCache(dir, () => undefined, {}, { dir: cache })).state === 'hit', `${what}: rebuilt`);
  }
});

/** A cache file's records (from MAGIC to the footer) and footer; `seal` writes them back with every checksum right. */
function unseal(b: Buffer): { records: Buffer; footer: { segments: { end: number; sha1: string }[]; offsets: number[]; notices: { message: string }[] } & Record<string, unknown> } {
  const flen = b.readUInt32LE(b.length - 12);
  const fstart = b.length - 32 - flen;
  return { records: b.subarray(0, fstart), footer: JSON.parse(b.subarray(fstart, fstart + flen).toString('utf8')) };
}
function seal(records: Buffer, footer: ReturnType<typeof unseal>['footer']): Buffer {
  let from = 8;
  for (const seg of footer.segments) {
    seg.sha1 = createHash('sha1').update(records.subarray(from, seg.end)).digest('hex');
    from = seg.end;
  }
  const fb = Buffer.from(JSON.stringify(footer), 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32LE(fb.length, 0);
  return Buffer.concat([records, fb, createHash('sha1').update(fb).digest(), len, Buffer.from('CLCFOOT\u0001', 'latin1')]);
}

test('a cache whose checksums pass but whose records do not decode, or whose footer was changed, is dropped and rebuilt (one notice)', async () => {
  const dir = tmp('cl-cache-run-');
  const cache = tmp('cl-cache-');
  writeRun(dir);
  await sameAsFresh(dir, cache);
  const [name] = cacheFiles(cache);
  const file = join(cache, name);
  const good = readFileSync(file);
  const { records, footer } = unseal(good);
  assert.ok(seal(Buffer.from(records), structuredClone(footer)).equals(good), 'the test re-seals a cache as the writer does');
  // the second record's roll-out count made huge: its arrays run past the record
  const undecodable = Buffer.from(records);
  undecodable.writeUInt32LE(0x7fffffff, footer.offsets[1] + 16);
  // a footer changed (a notice forged) without its checksum
  const forged = Buffer.from(good);
  const at = forged.indexOf('"notices":[');
  forged.write('"notices":[{"level":"error","message":"forged"},', at, 'latin1');
  const cases: Array<[string, Buffer, RegExp]> = [
    ['undecodable', seal(undecodable, structuredClone(footer)), /its records do not decode \(record 2: .*corrupt\)\); the run is read again and the cache rebuilt/],
    ['forged footer', Buffer.concat([forged.subarray(0, at), Buffer.from('"notices":[{"level":"error","message":"forged"},'), good.subarray(at + 11)]), /footer/],
  ];
  for (const [what, bytes, why] of cases) {
    writeFileSync(file, bytes);
    for (const [cmd, args] of COMMANDS) {
      writeFileSync(file, bytes);
      // a report's stored rows (results.ts) would answer without the run cache
      for (const f of readdirSync(cache)) if (f.endsWith('.clr')) rmSync(join(cache, f));
      const cached = await run(cmd, [dir, ...args], cache);
      const fresh = await run(cmd, [dir, ...args, '--no-cache'], cache);
      assert.equal(cached.code, fresh.code, `${what}, ${cmd}: ${cached.err}`);
      assert.equal(cached.out, fresh.out, `${what}, ${cmd}`);
      assert.equal(cached.err.split('\n').filter((l) => why.test(l)).length, 1, `${what}, ${cmd}: ${cached.err}`);
      assert.doesNotMatch(cached.err, /forged/);
      // rebuilt: the next run is a hit, with no notice
      const again = await run(cmd, [dir, ...args], cache);
      assert.equal(again.out, fresh.out);
      assert.doesNotMatch(again.err, /cache not used/, `${what}, ${cmd}: ${again.err}`);
      assert.equal((await openRunCache(dir, () => undefined, {}, { dir: cache })).state, 'hit', `${what}, ${cmd}: rebuilt`);
    }
  }
});

test('no cache is written for a run read with an error, nor for stdin; --no-cache writes none', async () => {
  const dir = tmp('cl-cache-run-');
  const cache = tmp('cl-cache-');
  writeRun(dir);
  await run('report', [dir, '--no-cache'], cache);
  assert.equal(cacheFiles(cache).length, 0);
  // a group too large to score: its features are not known, so no cache
  write(dir, 'big.jsonl', jsonl([group(4, 'big', Array.from({ length: 9 }, (_, i) => String(i % 3)))]));
  const r = await run('report', [dir, '--max-group-size', '8'], cache);
  assert.equal(r.code, 1);
  assert.equal(cacheFiles(cache).length, 0);
  assert.equal(readdirSync(cache).length, 0, 'no temporary file left behind');
});

test('score reads and writes the same cache as report, sweep and health; --no-cache bypasses it', async () => {
  const dir = tmp('cl-cache-run-');
  const cache = tmp('cl-cache-');
  writeRun(dir);
  const bypass = await run('score', [dir, '--no-cache'], cache);
  assert.equal(bypass.code, 0);
  assert.equal(readdirSync(cache).length, 0, '--no-cache writes no cache');
  const first = await run('score', [dir], cache);
  assert.equal(first.out, bypass.out);
  assert.equal(cacheFiles(cache).length, 1, 'score wrote the run cache');
  // the cache score wrote is the one report reads (one file: the same key)
  assert.equal((await openRunCache(dir, () => undefined, {}, { dir: cache })).state, 'hit');
  await run('report', [dir], cache);
  assert.equal(cacheFiles(cache).length, 1);
  // from the cache: the same lines, every operator (reasoning cosines and all)
  const second = await run('score', [dir], cache);
  assert.equal(second.out, bypass.out);
  const lines = second.out.trim().split('\n').map((l) => JSON.parse(l) as { results: Record<string, unknown> });
  assert.equal(lines.length, 6);
  assert.ok(lines.every((l) => 'core' in l.results && 'ec' in l.results));
});
