// `consensus-lens index` (builds or checks a run's persisted cache) and `sweep` from the persisted
// features: setting-major, each setting's lines written as soon as that setting is done, with the
// same totals as scoring the run group by group, on any number of threads.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import Ajv2020 from 'ajv/dist/2020';
import { PassThrough, Writable } from 'node:stream';
import { runIndex } from '../../src/cli/index-run.js';
import { runScore } from '../../src/cli/score-command.js';
import { runSweep } from '../../src/cli/sweep-command.js';
import { runReport } from '../../src/cli/report.js';
import { runHealth } from '../../src/cli/health.js';
import { ShardState, addStats, emptyStats, sweepGroup, type SweepJob } from '../../src/cli/pipeline.js';
import { UsageError, commandHelp } from '../../src/cli/args.js';
import { operatorSpec } from '../../src/engine/index.js';
import { openRunCache } from '../../src/logs/cache/cached-run.js';
import { readRun } from '../../src/logs/log-layer.js';
import { jsonl, write } from '../logs/helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
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
    rollouts: answers.map((a, i) => ({ response: `step ${step}: reasoning ${i % 3} on ${qid}, words ${'x'.repeat(i)} so \\boxed{${a}}`, mean_logprob: -0.1 - ((i * 7) % 5) * 0.03, reward: a === truth ? 1 : 0 })),
  };
}

/** 12 groups over 3 files (one of verl roll-out records). */
function writeRun(dir: string): void {
  for (let s = 1; s <= 2; s++) write(dir, `step${s}.jsonl`, jsonl(['q1', 'q2', 'q3', 'q4', 'q5'].map((q, k) => group(s, q, ['1', '2', '1', String(k), '1', '2', '3', '1'].map((x, i) => ((i + s) % 4 === 0 ? '2' : x)), '1'))));
  write(dir, 'rollout/3.jsonl', jsonl(['a', 'b'].flatMap((p) => [0, 1, 2, 3].map((i) => ({ input: p, output: `${p} ${i} words \\boxed{${i % 2}}`, score: i % 2, step: 3 })))));
}

interface Run {
  code: number;
  out: string;
  err: string;
}

async function cli(f: (argv: string[], io: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream }) => Promise<number>, args: string[], cache: string, stdout?: Writable): Promise<Run> {
  const out = stdout ?? new PassThrough();
  const stderr = new PassThrough();
  let o = '';
  let err = '';
  if (!stdout) out.on('data', (c) => (o += c));
  stderr.on('data', (c) => (err += c));
  const before = process.env.CONSENSUS_LENS_CACHE_DIR;
  process.env.CONSENSUS_LENS_CACHE_DIR = cache;
  try {
    const code = await f(args, { stdin: new PassThrough(), stdout: out, stderr });
    return { code, out: o, err };
  } finally {
    if (before === undefined) delete process.env.CONSENSUS_LENS_CACHE_DIR;
    else process.env.CONSENSUS_LENS_CACHE_DIR = before;
  }
}

test('index builds the cache, then finds it unchanged: a summary line, --json, and the cache report reads', async () => {
  const dir = tmp('cl-index-run-');
  const cache = tmp('cl-index-cache-');
  writeRun(dir);
  const first = await cli(runIndex, [dir, '--jobs', '0'], cache);
  assert.equal(first.code, 0, first.err);
  assert.match(first.out, /cache written: 3 files, 12 groups, 88 roll-outs; [\d.]+ MiB read, 0\.0 MiB reused; cache [\d.]+ MiB/);
  assert.equal(first.out.trim().split('\n').length, 1);
  assert.equal((await openRunCache(dir, () => undefined, {}, { dir: cache })).state, 'hit', 'the cache report, sweep, score and health read');
  const second = await cli(runIndex, [dir, '--json', '--jobs', '2'], cache);
  assert.equal(second.code, 0);
  const s = JSON.parse(second.out) as Record<string, unknown>;
  const logBytes = ['step1.jsonl', 'step2.jsonl', 'rollout/3.jsonl'].reduce((a, f) => a + statSync(join(dir, f)).size, 0);
  assert.deepEqual({ ...s, cache_file: typeof s.cache_file, cache_bytes: typeof s.cache_bytes }, { run: dir, state: 'hit', files: 3, groups: 12, rollouts: 88, bytes_read: 0, bytes_reused: logBytes, cache_file: 'string', cache_bytes: 'number' });
  assert.equal(s.cache_bytes, statSync(s.cache_file as string).size);
  const valid = new Ajv2020({ strict: false }).compile(JSON.parse(readFileSync(join(ROOT, 'docs/schemas/index.schema.json'), 'utf8')));
  assert.ok(valid(s), JSON.stringify(valid.errors));
  // the progress line, asked for on a pipe
  const rebuilt = await cli(runIndex, [dir, '--progress', '--jobs', '0'], tmp('cl-index-cache-'));
  assert.match(rebuilt.err, /consensus-lens: 12 groups, .* \(done\)\n$/);
});

test('index: --no-cache is a usage error, stdin is refused, --help comes from the options table', async () => {
  const dir = tmp('cl-index-run-');
  writeRun(dir);
  await assert.rejects(runIndex([dir, '--no-cache'], { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() }), (e: Error) => e instanceof UsageError && /index does not take --no-cache/.test(e.message));
  await assert.rejects(runIndex(['-'], { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() }), UsageError);
  const help = commandHelp('index');
  for (const flag of ['--json', '--jobs N', '--progress', '--ground-truth auto|use|ignore', '--allow-skipped']) assert.ok(help.includes(flag), flag);
  assert.ok(!help.includes('--no-cache'));
  assert.ok(!help.includes('--kappa'), 'index prepares features: no operator parameter');
});

/** The sweep totals group by group (sweepGroup over a fresh read), as lines. */
async function groupByGroup(dir: string, job: SweepJob): Promise<string> {
  const totals = job.settings.map(() => job.operators.map(emptyStats));
  const state = new ShardState();
  for await (const g of readRun(dir, () => undefined)) addStats(totals, sweepGroup(g, job, state.contextsFor(job.settings.length)));
  return job.settings
    .flatMap((params, k) =>
      job.operators.map((operator, o) => {
        const t = totals[k][o];
        const line: Record<string, unknown> = { params: { kappa: params.kappa }, operator, groups: t.groups, flips_vs_majority: t.flips, mean_gate: t.groups ? t.gateSum / t.groups : null };
        if (t.withTruth > 0) line.label_accuracy = t.correct / t.withTruth;
        return JSON.stringify(line) + '\n';
      }),
    )
    .join('');
}

test('sweep from the persisted features equals the group-by-group totals on 0, 1, 2 and 3 threads, cached or not', async () => {
  const dir = tmp('cl-sweep-run-');
  const cache = tmp('cl-sweep-cache-');
  writeRun(dir);
  const kappas = [0.1, 0.35, 0.9];
  const expected = await groupByGroup(dir, { settings: kappas.map((kappa) => ({ kappa })), operators: ['core', 'ec', 'majority'] });
  for (const jobs of ['0', '1', '2', '3']) {
    for (const extra of [[], ['--no-cache']]) {
      const argv = ['sweep', dir, '--kappa', kappas.join(','), '--operators', 'core,ec,majority', '--jobs', jobs, ...extra];
      // worker threads run the built bundle (dist/score-worker.js): the built CLI
      let r: Run;
      if (jobs === '0') r = await cli(runSweep, argv.slice(1), cache);
      else {
        const p = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...argv], { encoding: 'utf8', env: { ...process.env, CONSENSUS_LENS_CACHE_DIR: cache }, timeout: 120_000 });
        r = { code: p.status ?? -1, out: p.stdout, err: p.stderr };
      }
      assert.equal(r.code, 0, r.err);
      assert.equal(r.out, expected, `--jobs ${jobs} ${extra.join(' ')}`);
    }
  }
  assert.equal(readdirSync(cache).length, 1, 'one cache (--no-cache wrote none)');
});

test('sweep writes each setting as soon as it is done, not all settings at the end', async () => {
  const dir = tmp('cl-sweep-run-');
  const cache = tmp('cl-sweep-cache-');
  writeRun(dir);
  await cli(runIndex, [dir, '--jobs', '0'], cache);
  // CoRE's runs counted (the real operator still runs): how far the work was at each line written
  const core = operatorSpec('core')!;
  const real = core.run;
  let runs = 0;
  core.run = (g, p, ctx) => {
    runs++;
    return real(g, p, ctx);
  };
  const seen: number[] = [];
  const stdout = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const _ of chunk.toString().split('\n').slice(1)) seen.push(runs);
      done();
    },
  });
  try {
    const r = await cli(runSweep, [dir, '--kappa', '0.1:1:0.1', '--operators', 'core', '--jobs', '0'], cache, stdout);
    assert.equal(r.code, 0, r.err);
  } finally {
    core.run = real;
  }
  // 12 groups, of which the 2 roll-out groups have answers in 2 classes: CoRE runs on every one
  assert.equal(seen.length, 10);
  assert.deepEqual(seen, Array.from({ length: 10 }, (_, k) => 12 * (k + 1)), 'setting k written after its own 12 runs, before the next setting');
});

test('an appended file extends its cached index from where it stopped; other changes read the run again', async () => {
  const dir = tmp('cl-append-run-');
  const cache = tmp('cl-append-cache-');
  const qs = (s: number, names: string[]) => jsonl(names.map((q, k) => group(s, q, ['1', '2', '1', String(k % 3), '1', '2'], '1')));
  write(dir, 'step1.jsonl', qs(1, ['q1', 'q2', 'q3']));
  write(dir, 'step2.jsonl', qs(2, ['q1', 'q2']));
  const index = async (): Promise<Record<string, number | string>> => {
    const r = await cli(runIndex, [dir, '--json', '--jobs', '0'], cache);
    assert.equal(r.code, 0, r.err);
    return JSON.parse(r.out) as Record<string, number | string>;
  };
  const size = (f: string) => statSync(join(dir, f)).size;
  assert.equal((await index()).state, 'built');
  const cacheFile = join(cache, readdirSync(cache)[0]);

  // lines appended to the last file, the last of them not yet terminated
  const before = size('step2.jsonl');
  // (a writer half-way through a line: a complete JSON object without its newline would be read)
  const partial = JSON.stringify(group(2, 'q5', ['1', '1'], '1'));
  const added = qs(2, ['q3', 'q4']) + partial.slice(0, 40);
  appendFileSync(join(dir, 'step2.jsonl'), added);
  let s = await index();
  assert.equal(s.state, 'extended');
  assert.equal(s.groups, 7, 'the two complete new groups');
  assert.equal(s.bytes_read, Buffer.byteLength(added), 'only the appended bytes are read');
  assert.equal(s.bytes_reused, size('step1.jsonl') + before);
  assert.equal(s.cache_file, cacheFile, 'the same cache file, extended in place');
  await sameAsFresh(dir, cache);

  // the unterminated line completed: read on from its start
  appendFileSync(join(dir, 'step2.jsonl'), partial.slice(40) + '\n' + qs(3, ['q1']));
  const grown = size('step2.jsonl');
  s = await index();
  assert.equal(s.state, 'extended');
  assert.equal(s.groups, 9, 'q5 and step 3\'s q1');
  assert.equal(s.bytes_read, grown - before - Buffer.byteLength(qs(2, ['q3', 'q4'])), 'from the incomplete line on');
  await sameAsFresh(dir, cache);
  assert.equal((await index()).state, 'hit');

  // not an extension: an earlier file appended to, a duplicate group appended, the last file truncated or replaced
  const total = () => size('step1.jsonl') + size('step2.jsonl');
  const changes: Array<[string, () => void]> = [
    ['an earlier file appended to', () => appendFileSync(join(dir, 'step1.jsonl'), qs(1, ['q9']))],
    ['a group already cached, appended again', () => appendFileSync(join(dir, 'step2.jsonl'), qs(2, ['q1']))],
    ['the last file truncated', () => truncateSync(join(dir, 'step2.jsonl'), size('step2.jsonl') - 10)],
    ['the last file replaced by a longer one', () => writeFileSync(join(dir, 'step2.jsonl'), qs(2, ['q1', 'q2', 'q3', 'q4', 'q6']))],
  ];
  for (const [what, change] of changes) {
    change();
    s = await index();
    assert.equal(s.state, 'built', what);
    assert.equal(s.bytes_read, total(), `${what}: the whole run read`);
    await sameAsFresh(dir, cache);
  }
});

test('a foreign or corrupt cache under the run\'s name is rebuilt by index, never extended', async () => {
  const dir = tmp('cl-append-run-');
  const cache = tmp('cl-append-cache-');
  write(dir, 'run.jsonl', jsonl([group(1, 'q1', ['1', '1', '2'], '1')]));
  await cli(runIndex, [dir, '--jobs', '0'], cache);
  const file = join(cache, readdirSync(cache)[0]);
  const good = readFileSync(file);
  appendFileSync(join(dir, 'run.jsonl'), jsonl([group(1, 'q2', ['3', '3', '2'], '3')]));
  const flipped = Buffer.from(good);
  flipped[40] ^= 0x10;
  for (const bytes of [flipped, Buffer.from('not a cache at all'.repeat(10))]) {
    writeFileSync(file, bytes);
    const r = await cli(runIndex, [dir, '--json', '--jobs', '0'], cache);
    assert.equal((JSON.parse(r.out) as { state: string }).state, 'built');
    assert.match(r.err, /cache not used \((its records do not match their checksum \(corrupt\)|not a consensus-lens cache of this format)\)/);
    await sameAsFresh(dir, cache);
  }
});

/** score, report, sweep and health through the cache print what they print without it. */
async function sameAsFresh(dir: string, cache: string): Promise<void> {
  const commands: Array<[typeof runScore, string[]]> = [
    [runScore, ['--operators', 'majority,ec,core']],
    [runReport, []],
    [runSweep, ['--kappa', '0.2,0.8', '--operators', 'core,majority']],
    [runHealth, ['--json']],
  ];
  for (const [f, args] of commands) {
    const cached = await cli(f, [dir, ...args, '--jobs', '0'], cache);
    const fresh = await cli(f, [dir, ...args, '--jobs', '0', '--no-cache'], cache);
    assert.equal(cached.code, fresh.code, `${f.name}: ${cached.err}`);
    assert.equal(cached.out, fresh.out, `${f.name}: through the cache`);
  }
}
