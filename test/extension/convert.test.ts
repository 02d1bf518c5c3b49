// The extension's dump conversion (src/extension/convert/converter.ts): a pickle from an untrusted
// workspace, or without the opt-in, never reaches a process; a Trackio database (written by the
// real trackio 0.43.0, test/fixtures/logs/writers/trackio) converts through the extension's copy of
// the converter run as `python -c`, in a folder whose modules are not imported, and a trace added
// to the database while it is followed is read on the next pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { collect, tempDir } from '../logs/helpers.js';
import { pythonWith, skipWithoutPython } from '../tools.js';
import { type ConvertJob, DumpFollower, convertDump, convertedFolder, dumpOf, dumpInputs, refusal } from '../../src/extension/convert/converter.js';

const SOURCE = readFileSync('python/consensus_lens/convert.py', 'utf8');
const FX = 'test/fixtures/logs/writers';
const PY = pythonWith('sqlite3') ?? 'python3';

// A pickle that, loaded by pickle (torch.load's default), creates MARKER.
function evilPickle(file: string, marker: string): void {
  const r = spawnSync(PY, ['-c', `import pickle,os,sys\nclass E:\n  def __reduce__(self): return (os.system, ('touch ' + sys.argv[2],))\nopen(sys.argv[1],'wb').write(pickle.dumps(E()))`, file, marker]);
  assert.equal(r.status, 0, String(r.stderr));
}

const files = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith('.jsonl')).sort() : []);

test('a .pt from an untrusted workspace, or without the opt-in, is refused before any process starts (the pickle is never loaded)', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const dump = join(dir, 'run/rollout_data');
    mkdirSync(dump, { recursive: true });
    const marker = join(dir, 'LOADED');
    evilPickle(join(dump, '0.pt'), marker);
    const d = dumpOf(join(dir, 'run'))!;
    assert.deepEqual([d.kind, d.label, dumpInputs(d)], ['slime', 'run', [join(dump, '0.pt')]]);
    let spawned = 0;
    const spy = ((...a: Parameters<typeof spawn>) => {
      spawned++;
      return spawn(...a);
    }) as never;
    const job = (gate: ConvertJob['gate']): ConvertJob => ({ python: PY, source: SOURCE, kind: 'slime', inputs: dumpInputs(d), out: join(dir, 'out'), cwd: dir, gate });
    for (const gate of [{ trusted: false, allowPickles: true }, { trusted: false, allowPickles: false }, { trusted: true, allowPickles: false }]) {
      const r = await convertDump(job(gate), spy);
      assert.equal(r.ok, false);
      assert.ok(!r.ok && r.refused);
      assert.match(!r.ok ? r.error : '', gate.trusted ? /allowPickles/ : /not trusted \(Restricted Mode\)/);
      assert.match(!r.ok ? r.error : '', /a pickle: loading it can run any code/);
      // the follower (a dump converted again as files appear) checks the same gate on every pass
      const reports: boolean[] = [];
      const f = new DumpFollower(d, () => job(gate), (res) => reports.push(res.ok), spy);
      await f.pass();
      evilPickle(join(dump, '1.pt'), marker);
      await f.pass();
      f.dispose();
      assert.ok(reports.length >= 2 && reports.every((ok) => !ok), String(reports)); // a refusal per file, each reported
    }
    assert.equal(spawned, 0, 'no process was started');
    assert.equal(existsSync(marker), false, 'the pickle was not loaded');
    assert.deepEqual(files(join(dir, 'out')), []);
    // a Trackio database is data, not code: no opt-in
    assert.equal(refusal('trackio', { trusted: false, allowPickles: false }), null);
  } finally {
    cleanup();
  }
});

test('a Trackio database converts through the extension\'s copy of the converter (python -c), as the Python package converts it; the working folder\'s modules are not imported', { skip: skipWithoutPython('sqlite3') }, async () => {
  const { dir, cleanup } = tempDir();
  try {
    const db = join(dir, 'cl-fixture.db');
    copyFileSync(join(FX, 'trackio/db/cl-fixture.db'), db);
    const d = dumpOf(db)!;
    assert.deepEqual([d.kind, d.label], ['trackio', 'cl-fixture']);
    const out = convertedFolder(join(dir, 'storage'), d);
    assert.ok(out.startsWith(join(dir, 'storage', 'converted')));
    // a module named like one the converter imports, in the folder it runs in
    const cwd = join(dir, 'cwd');
    mkdirSync(cwd);
    const marker = join(dir, 'IMPORTED');
    writeFileSync(join(cwd, 'json.py'), `open(${JSON.stringify(marker)}, 'w').close()\n`);
    const r = await convertDump({ python: PY, source: SOURCE, kind: 'trackio', inputs: [db], out, cwd, gate: { trusted: false, allowPickles: false } });
    assert.ok(r.ok, !r.ok ? r.error : '');
    assert.match(r.ok ? r.note : '', /traces the trainer chose to log/);
    assert.equal(existsSync(marker), false, 'json.py in the working folder was not imported');
    const want = join(FX, 'trackio/native');
    assert.deepEqual(files(out), files(want));
    for (const f of files(want)) assert.equal(readFileSync(join(out, f), 'utf8'), readFileSync(join(want, f), 'utf8'), f);
    const { groups } = await collect(out);
    const lines = files(want).flatMap((f) => readFileSync(join(want, f), 'utf8').split('\n').filter(Boolean));
    assert.equal(groups.length, lines.length);
  } finally {
    cleanup();
  }
});

test('a followed Trackio database: nothing converted while it is unchanged; a trace the trainer adds (in the WAL) is in the next pass', { skip: skipWithoutPython('sqlite3') }, async () => {
  const { dir, cleanup } = tempDir();
  try {
    const db = join(dir, 'p.db');
    copyFileSync(join(FX, 'trackio/db/cl-fixture.db'), db);
    const d = dumpOf(db)!;
    const out = join(dir, 'out');
    const results: boolean[] = [];
    const f = new DumpFollower(d, (inputs) => ({ python: PY, source: SOURCE, kind: 'trackio', inputs, out, cwd: dir, gate: { trusted: true, allowPickles: false } }), (r) => results.push(r.ok));
    assert.equal((await f.pass())?.ok, true);
    assert.equal(await f.pass(), undefined, 'unchanged: not converted again');
    const before = readFileSync(join(out, 'slime-rank-0/000001.jsonl'), 'utf8');
    // a writer that keeps the database open in WAL mode (as Trackio does) adds a trace of step 1, group 0
    const w = spawnSync(PY, ['-c', [
      'import sqlite3,sys,json,time',
      'c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA journal_mode=WAL")',
      'row=c.execute("SELECT * FROM traces WHERE step=1 ORDER BY rowid LIMIT 1").fetchone()',
      'cols=[x[1] for x in c.execute("PRAGMA table_info(traces)")]',
      'r=dict(zip(cols,row)); r.pop("id",None); m=json.loads(r["metadata"]); m["sample_index"]=999; r["metadata"]=json.dumps(m)',
      'r["messages"]=json.dumps(json.loads(r["messages"])[:-1]+[{"role":"assistant","content":"a late answer 42"}])',
      'c.execute("INSERT INTO traces (%s) VALUES (%s)" % (",".join(r), ",".join("?"*len(r))), list(r.values())); c.commit()',
      'time.sleep(0.01); sys.stdout.flush()',
    ].join('\n'), db]);
    assert.equal(w.status, 0, String(w.stderr));
    const second = await f.pass();
    f.dispose();
    assert.equal(second?.ok, true, second && !second.ok ? second.error : '');
    const after = readFileSync(join(out, 'slime-rank-0/000001.jsonl'), 'utf8');
    assert.notEqual(after, before);
    assert.match(after, /a late answer 42/);
    assert.match(after, /"sample_idx": 999/);
    assert.deepEqual(results, [true, true]);
  } finally {
    cleanup();
  }
});

const TORCH_PY = [process.env.CONSENSUS_LENS_FRAMEWORKS_VENV && join(process.env.CONSENSUS_LENS_FRAMEWORKS_VENV, 'bin/python')]
  .filter((p): p is string => !!p && existsSync(p))
  .concat(pythonWith('torch') ? ['python3'] : [])[0];
// The core stage has no torch and skips these two; the framework stage runs them with its venv and
// CONSENSUS_LENS_REQUIRE_TORCH=1 (.ci/run), where a missing torch is a failure, not a skip.
const TORCH_SKIP = TORCH_PY || process.env.CONSENSUS_LENS_REQUIRE_TORCH === '1' ? false : 'no python with torch (set CONSENSUS_LENS_FRAMEWORKS_VENV)';

test('opted in, in a trusted workspace: slime .pt dumps convert with torch.load(weights_only=True), as the Python package converts them; a pickle that would run code is refused unloaded', { skip: TORCH_SKIP }, async () => {
  const { dir, cleanup } = tempDir();
  try {
    const d = dumpOf(join(FX, 'slime/dump'))!;
    assert.equal(d.kind, 'slime');
    const out = join(dir, 'out');
    const gate = { trusted: true, allowPickles: true };
    const r = await convertDump({ python: TORCH_PY!, source: SOURCE, kind: 'slime', inputs: dumpInputs(d), out, cwd: dir, gate });
    assert.ok(r.ok, !r.ok ? r.error : '');
    const want = join(FX, 'slime/native');
    assert.deepEqual(files(out), files(want));
    for (const f of files(want)) assert.equal(readFileSync(join(out, f), 'utf8'), readFileSync(join(want, f), 'utf8'), f);
    const marker = join(dir, 'LOADED');
    mkdirSync(join(dir, 'evil/rollout_data'), { recursive: true });
    evilPickle(join(dir, 'evil/rollout_data/0.pt'), marker);
    const bad = await convertDump({ python: TORCH_PY!, source: SOURCE, kind: 'slime', inputs: [join(dir, 'evil/rollout_data/0.pt')], out: join(dir, 'out2'), cwd: dir, gate });
    assert.equal(bad.ok, false);
    assert.match(!bad.ok ? bad.error : '', /refused by torch\.load\(weights_only=True\)/);
    assert.equal(existsSync(marker), false);
  } finally {
    cleanup();
  }
});

test('a followed slime dump (opted in, trusted): a .pt still being written is retried, not reported, until whole; the next rollout is converted alone', { skip: TORCH_SKIP }, async () => {
  const { dir, cleanup } = tempDir();
  try {
    const rd = join(dir, 'dump/rollout_data');
    mkdirSync(rd, { recursive: true });
    copyFileSync(join(FX, 'slime/dump/rollout_data/0.pt'), join(rd, '0.pt'));
    const d = dumpOf(join(dir, 'dump'))!;
    const out = join(dir, 'out');
    const reports: Array<[boolean, string[]]> = [];
    const f = new DumpFollower(d, (inputs) => ({ python: TORCH_PY!, source: SOURCE, kind: 'slime', inputs, out, cwd: dir, gate: { trusted: true, allowPickles: true } }), (r, inputs) => reports.push([r.ok, inputs]));
    assert.equal((await f.pass())?.ok, true);
    assert.deepEqual(files(out), ['000000.jsonl']);
    // torch.save writes in place: the poll sees the file half-written
    const whole = readFileSync(join(FX, 'slime/dump/rollout_data/1.pt'));
    writeFileSync(join(rd, '1.pt'), whole.subarray(0, whole.length >> 1));
    assert.equal((await f.pass(true))?.ok, false);
    assert.deepEqual(reports.map(([ok]) => ok), [true], 'a file that may still be written is not reported');
    writeFileSync(join(rd, '1.pt'), whole);
    assert.equal((await f.pass(true))?.ok, true);
    assert.deepEqual(reports, [[true, [join(rd, '0.pt')]], [true, [join(rd, '1.pt')]]]);
    assert.deepEqual(files(out), files(join(FX, 'slime/native')));
    for (const n of files(out)) assert.equal(readFileSync(join(out, n), 'utf8'), readFileSync(join(FX, 'slime/native', n), 'utf8'));
    // a file that stays broken is reported once, on the second poll that finds it unchanged
    writeFileSync(join(rd, '2.pt'), whole.subarray(0, 100));
    await f.pass(true);
    await f.pass(true);
    await f.pass(true);
    f.dispose();
    assert.deepEqual(reports.slice(2).map(([ok, i]) => [ok, i]), [[false, [join(rd, '2.pt')]]]);
  } finally {
    cleanup();
  }
});

// ---- miles: trajectory files with their dashboard columns (polars, ZSTD), no pickle ----

const MILES = join(FX, 'miles/dump');

test('miles dashboard_columns (written by save_dashboard_columns with the real polars, ZSTD) read without torch: the masked log-prob mean per sample, the policy tokens the trajectory\'s assistant turns', async () => {
  const { readMilesColumns, milesColumnsFile } = await import('../../src/logs/miles-columns.js');
  const pq = milesColumnsFile(join(MILES, 'trajectory/eval_1.jsonl'))!;
  assert.equal(pq, join(MILES, 'dashboard_columns/rollout_eval_1.parquet'));
  assert.match(readFileSync(pq).toString('latin1'), /ZSTD|\(\xb5\/\xfd/); // a ZSTD frame's magic in the pages
  const cols = await readMilesColumns(pq);
  const traj = readFileSync(join(MILES, 'trajectory/eval_1.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  assert.equal(cols.size, traj.length);
  for (const o of traj) {
    const c = cols.get(o.sample_index)!;
    // the generator makes a token per character; the loss counts the assistant's, not the tool's
    const policy = (o.messages as Array<{ role: string; content: string }>).slice(o.prompt.length).filter((m) => m.role === 'assistant').reduce((n, m) => n + m.content.length, 0);
    assert.equal(c.policyTokens, policy);
    assert.ok(c.meanLogprob !== null && c.meanLogprob < 0 && c.meanLogprob > -5);
  }
  // the same means from pyarrow, where the framework venv has it
  const py = process.env.CONSENSUS_LENS_FRAMEWORKS_VENV ? join(process.env.CONSENSUS_LENS_FRAMEWORKS_VENV, 'bin/python') : pythonWith('pyarrow');
  if (py && spawnSync(py, ['-c', 'import pyarrow']).status === 0) {
    const r = spawnSync(py, ['-c', 'import pyarrow.parquet as pq,sys,json\nt=pq.read_table(sys.argv[1]).to_pylist()\nprint(json.dumps({r["sample_index"]: sum(l for l,m in zip(r["rollout_log_probs"],r["loss_mask"]) if m==1)/sum(r["loss_mask"]) for r in t}))', pq], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const want = JSON.parse(r.stdout) as Record<string, number>;
    for (const [k, v] of Object.entries(want)) assert.ok(Math.abs(cols.get(Number(k))!.meanLogprob! - v) < 1e-6, k);
  }
});

test('a miles dump opened as a dump: trajectory groups with their confidence as native records, no Python; a half-written trajectory waits for its last line; a new rollout is converted on the next pass', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const src = join(dir, 'dump');
    mkdirSync(join(src, 'trajectory'), { recursive: true });
    mkdirSync(join(src, 'dashboard_columns'), { recursive: true });
    mkdirSync(join(src, 'rollout_data'), { recursive: true });
    writeFileSync(join(src, 'rollout_data/0.pt'), 'a pickle is never read here');
    const t0 = readFileSync(join(MILES, 'trajectory/0.jsonl'));
    const cut = t0.lastIndexOf('\n', t0.length - 2) + 30;
    writeFileSync(join(src, 'trajectory/0.jsonl'), t0.subarray(0, cut));
    copyFileSync(join(MILES, 'dashboard_columns/rollout_0.parquet'), join(src, 'dashboard_columns/rollout_0.parquet'));
    const d = dumpOf(src)!;
    assert.deepEqual([d.kind, d.label], ['miles', 'dump']);
    const out = join(dir, 'out');
    let spawned = 0;
    const spy = ((...a: Parameters<typeof spawn>) => {
      spawned++;
      return spawn(...a);
    }) as never;
    const f = new DumpFollower(d, (inputs) => ({ python: 'no-python-here', source: '', kind: 'miles', inputs, out, cwd: dir, gate: { trusted: false, allowPickles: false } }), () => {}, spy);
    const r0 = await f.pass();
    assert.ok(r0?.ok, r0 && !r0.ok ? r0.error : '');
    let { groups } = await collect(out);
    assert.deepEqual(groups.map((g) => g.rollouts.length), [4, 4, 3], 'the cut line is not read');
    writeFileSync(join(src, 'trajectory/0.jsonl'), t0);
    for (const n of ['1.jsonl', 'eval_1.jsonl']) copyFileSync(join(MILES, 'trajectory', n), join(src, 'trajectory', n));
    for (const n of ['rollout_1.parquet', 'rollout_eval_1.parquet']) copyFileSync(join(MILES, 'dashboard_columns', n), join(src, 'dashboard_columns', n));
    assert.equal((await f.pass())?.ok, true);
    assert.equal(await f.pass(), undefined);
    f.dispose();
    assert.equal(spawned, 0);
    assert.deepEqual(files(out), ['000000.jsonl', '000001.jsonl', 'eval/000001.jsonl']);
    ({ groups } = await collect(out));
    // the same groups as the trajectory reader gives, with the columns' confidence
    const direct = (await collect(join(FX, 'miles'))).groups;
    // (evaluations: a run of their own, `eval`, their score in `extra` — the native format has no stream field)
    const shape = (gs: typeof groups, evalRun: (g: (typeof groups)[number]) => boolean) =>
      gs.map((g) => [g.step, g.questionId, evalRun(g), g.rollouts.map((r) => [r.response, r.reward, r.sampleIdx])]);
    assert.deepEqual(
      shape(groups, (g) => /(^|\/)eval$/.test(g.run ?? '')),
      shape(direct, (g) => g.stream === 'validation'),
    );
    const { readMilesColumns } = await import('../../src/logs/miles-columns.js');
    const c1 = await readMilesColumns(join(MILES, 'dashboard_columns/rollout_1.parquet'));
    const train1 = groups.filter((x) => x.step === 1 && !/eval$/.test(x.run ?? ""));
    assert.equal(train1.length, 3);
    for (const g of train1) for (const r of g.rollouts) assert.equal(r.meanLogprob, c1.get(r.sampleIdx!)!.meanLogprob);
  } finally {
    cleanup();
  }
});

test('a ZSTD parquet page decodes into exactly its declared size: more or less is an error, never a larger buffer', async () => {
  const { zstdPage } = await import('../../src/logs/parquet.js');
  // a one-block frame: single segment, content size 3, a raw block of "abc"
  const frame = new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x03, 0x19, 0x00, 0x00, 0x61, 0x62, 0x63]);
  assert.equal(Buffer.from(zstdPage(frame, 3)).toString(), 'abc');
  assert.throws(() => zstdPage(frame, 2), /ZSTD page/);
  assert.throws(() => zstdPage(frame, 5), /ZSTD page/);
  assert.throws(() => zstdPage(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), 8), /ZSTD page/);
});
