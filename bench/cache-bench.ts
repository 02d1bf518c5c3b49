// The persisted run cache and the host's cost of an index change:
//   node --import tsx bench/cache-bench.ts [--rollouts 2000000] [--bytes 600] [--keep] [--run DIR]
//
// Generates a run folder of native group records (one file per step, 64 questions × 64 roll-outs
// of ~`bytes` bytes, mean_logprob, reward, ground truth) in a temp folder, then with the built CLI
// (dist/cli.js) and a cache folder of its own:
//   report (first)   reads the texts, prepares every group, writes the cache;
//   report (second)  the run unchanged: reads the cache (target ≤ 10% of the first);
//   index (second)   the run unchanged: the cache checked, nothing read;
//   sweep κ          a run-wide re-score with a new κ (CoRE) from the persisted features
//                    (target ≤ 3 s per million roll-outs on 2 cores; the first report beside it),
//                    and a 10-setting sweep (κ = 0.1 … 1) beside it: the cost of one more setting;
//   cache size       bytes per million roll-outs.
// And in-process: the store's rebuild after an index change on a followed run of 256,000
// roll-outs (4,000 groups × 64), against building every roll-out with rolloutsOf (what the old
// enumerable getter cost on each change). Prints one JSON line with `rows` for bench/run.mjs.
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { loadavg, tmpdir } from 'node:os';
import type { PreparedGroup } from '../src/engine/index.js';
import { join } from 'node:path';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 4294967296;
  };
}
const WORDS = 'the of and to in is we so let then thus therefore compute solve equation value sum product factor prime square root angle triangle area'.split(' ');

/** A run folder of `rollouts` roll-outs: step files of 64 questions × 64 roll-outs. */
async function generate(dir: string, rollouts: number, bytes: number, questions = 64, n = 64): Promise<number> {
  const r = rng(42);
  let written = 0;
  for (let step = 1; written < rollouts; step++) {
    const out = createWriteStream(join(dir, `step-${String(step).padStart(5, '0')}.jsonl`));
    for (let q = 0; q < questions && written < rollouts; q++) {
      const ros = [];
      const truth = q % 4;
      for (let i = 0; i < n; i++) {
        let text = '';
        while (text.length < bytes * (0.9 + 0.2 * r())) text += WORDS[Math.floor(r() * WORDS.length)] + (r() < 0.1 ? '.\n' : ' ');
        const ans = r() < 0.6 ? truth : Math.floor(r() * 4);
        ros.push({ response: `${text} so the answer is \\boxed{${ans}}`, mean_logprob: -r(), reward: ans === truth ? 1 : 0 });
      }
      const line = JSON.stringify({ kind: 'group', step, question_id: `math/${q}`, ground_truth: String(truth), rollouts: ros }) + '\n';
      if (!out.write(line)) await once(out, 'drain');
      written += n;
    }
    out.end();
    await once(out, 'finish');
  }
  return written;
}

/** Wall seconds of one CLI run, and its CPU seconds (user + system, all threads; /usr/bin/time). */
function cli(argv: string[], cache: string): { wall: number; cpu: number } {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, 'dist/cli.js', ...argv], { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, CONSENSUS_LENS_CACHE_DIR: cache } });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`consensus-lens ${argv.join(' ')} failed: ${r.stderr}`);
  const m = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
  return { wall, cpu: m ? Number(m[1]) + Number(m[2]) : Number.NaN };
}

/**
 * In-process, CPU time: one sweep setting (κ = 0.5, CoRE) as the CLI's threads run it over the cache
 * file (`scanSetting`: read, decode, vote, CoRE, sums), against CoRE alone on the same features
 * already decoded in memory (the floor: what the what-if engine's re-score runs per group).
 */
async function scanVsCore(cache: string): Promise<{ scanCpuS: number; coreCpuS: number; groups: number }> {
  const { checkCache, decodeFeatures, RecordReader } = await import('../src/logs/cache/cached-run.js');
  const { ShardState, scanSetting } = await import('../src/cli/pipeline.js');
  const { resolveParams, runOperator } = await import('../src/engine/index.js');
  const name = readdirSync(cache).find((f) => f.endsWith('.clc'))!;
  const file = join(cache, name);
  // no file list: 'stale', with the footer once the records are checked
  const footer = checkCache(file, name.slice(0, -'.clc'.length), []).footer!;
  const cpu = (f: () => void) => {
    const t = process.cpuUsage();
    f();
    const u = process.cpuUsage(t);
    return (u.user + u.system) / 1e6;
  };
  const job = { file, from: footer.offsets[0], to: footer.end, operators: ['core' as const], params: { kappa: 0.5 }, setting: 0, maxGroupSize: 4096 };
  scanSetting({ ...job, to: footer.offsets[Math.min(200, footer.groups - 1)] }, new ShardState()); // warm-up
  const scanCpuS = cpu(() => scanSetting(job, new ShardState()));
  const groups: PreparedGroup[] = [];
  const reader = new RecordReader(file, undefined, footer.end);
  for (let r = reader.next(); r; r = reader.next()) groups.push(decodeFeatures(r.buf.slice(r.at, r.at + r.length)).prepared);
  reader.close();
  const p = resolveParams({ kappa: 0.5 });
  const coreCpuS = cpu(() => {
    for (const g of groups) runOperator(g, 'core', p);
  });
  return { scanCpuS, coreCpuS, groups: groups.length };
}

/** The store's rebuild on a followed run of 4,000 × 64 roll-outs, and the old cost (every roll-out built). */
async function hostRebuild(): Promise<{ rebuildMs: number; materialiseMs: number; rollouts: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'cl-host-bench-'));
  try {
    await generate(dir, 256_000, 40, 1000);
    const { RunStore } = await import('../src/extension/model/run-store.js');
    const { rolloutsOf } = await import('../src/logs/log-layer.js');
    const store = new RunStore({ configuredOperator: () => 'majority', params: () => ({}), follow: false });
    const run = store.add(dir, 'opened');
    await store.idle();
    const rebuild = (store as unknown as { rebuild(r: typeof run): void }).rebuild.bind(store);
    const time = (f: () => void) => {
      const xs: number[] = [];
      for (let k = 0; k < 9; k++) {
        const t = process.hrtime.bigint();
        f();
        xs.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      return xs.sort((a, b) => a - b)[4];
    };
    const rebuildMs = time(() => rebuild(run));
    let sink = 0;
    const materialiseMs = time(() => {
      for (const e of run.index!.groups()) sink += rolloutsOf(e).length;
    });
    const rollouts = run.rollouts;
    store.dispose();
    if (sink === 0) throw new Error('nothing built');
    return { rebuildMs, materialiseMs, rollouts };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Roll-outs of a run written by `generate` (one group record per line). */
function countRollouts(dir: string): number {
  let n = 0;
  for (const f of readdirSync(dir)) for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) if (line) n += (JSON.parse(line) as { rollouts: unknown[] }).rollouts.length;
  return n;
}

async function main(): Promise<void> {
  const want = Number(flag('rollouts') ?? 2_000_000);
  const bytes = Number(flag('bytes') ?? 600);
  const root = mkdtempSync(join(tmpdir(), 'cl-cache-bench-'));
  // --run DIR: a run generated by an earlier --keep (its roll-outs counted again), else a new one
  const given = flag('run');
  const dir = given ?? join(root, 'run');
  const cache = join(root, 'cache');
  if (!given) mkdirSync(dir);
  try {
    const rollouts = given ? countRollouts(dir) : await generate(dir, want, bytes);
    let logBytes = 0;
    for (const f of readdirSync(dir)) logBytes += statSync(join(dir, f)).size;
    const perM = rollouts / 1e6;
    const firstRun = cli(['report', dir], cache);
    const secondRun = cli(['report', dir], cache);
    const first = firstRun.wall;
    const second = secondRun.wall;
    const cacheBytes = readdirSync(cache).reduce((a, f) => a + statSync(join(cache, f)).size, 0);
    const index = cli(['index', dir], cache).wall;
    const sweepRun = cli(['sweep', dir, '--kappa', '0.5', '--operators', 'core'], cache);
    const sweep10Run = cli(['sweep', dir, '--kappa', '0.1:1:0.1', '--operators', 'core'], cache);
    const sweep = sweepRun.wall;
    const sweep10 = sweep10Run.wall;
    const load = loadavg()[0];
    const inProcess = await scanVsCore(cache);
    const host = await hostRebuild();
    const rows: Array<[string, string, string, string, string, boolean | null]> = [
      [`report, second run (unchanged, cache), ${(rollouts / 1e6).toFixed(1)} M roll-outs`, `${second.toFixed(1)} s`, `${first.toFixed(1)} s (first run)`, `${((100 * second) / first).toFixed(1)}%`, '≤ 10%', second <= 0.1 * first],
      [`index, second run (unchanged: the cache checked)`, `${index.toFixed(2)} s`, `${first.toFixed(1)} s (first report)`, `${((100 * index) / first).toFixed(2)}%`, '—', null],
      [`sweep κ = 0.5 (CoRE) from persisted features, per million roll-outs`, `${(sweep / perM).toFixed(2)} s (${(sweepRun.cpu / perM).toFixed(2)} CPU s)`, `${(first / perM).toFixed(2)} s (first report)`, `${((100 * sweep) / first).toFixed(1)}%`, '≤ 3 s per million', sweep / perM <= 3],
      [`sweep of 10 κ settings (CoRE), per setting and million roll-outs`, `${(sweep10 / 10 / perM).toFixed(2)} s (${(sweep10Run.cpu / 10 / perM).toFixed(2)} CPU s)`, `${(first / perM).toFixed(2)} s (first report)`, `${((100 * sweep10) / 10 / first).toFixed(1)}%`, '≤ 3 s per million', sweep10 / 10 / perM <= 3],
      [`one setting in-process, CPU per million roll-outs: the threads' pass over the cache (read, decode, vote, CoRE)`, `${(inProcess.scanCpuS / perM).toFixed(2)} CPU s`, `${(inProcess.coreCpuS / perM).toFixed(2)} CPU s (CoRE alone, features in memory)`, `${((100 * inProcess.scanCpuS) / inProcess.coreCpuS).toFixed(0)}%`, '—', null],
      [`cache size per million roll-outs`, `${(cacheBytes / perM / 2 ** 20).toFixed(0)} MiB`, `${(logBytes / perM / 2 ** 20).toFixed(0)} MiB of logs`, `${((100 * cacheBytes) / logBytes).toFixed(1)}%`, 'stated', null],
      [`store rebuild after an index change, ${host.rollouts.toLocaleString('en')} roll-outs`, `${host.rebuildMs.toFixed(2)} ms`, `${host.materialiseMs.toFixed(1)} ms (every roll-out built)`, `${((100 * host.rebuildMs) / host.materialiseMs).toFixed(1)}%`, 'no roll-out built', null],
    ];
    process.stdout.write(JSON.stringify({ rollouts, logBytes, bytes, load, firstReportS: first, firstReportCpuS: firstRun.cpu, secondReportS: second, indexS: index, sweepCachedS: sweep, sweepCachedCpuS: sweepRun.cpu, sweep10S: sweep10, sweep10CpuS: sweep10Run.cpu, inProcess, cacheBytes, host, rows }) + '\n');
  } finally {
    if (!args.includes('--keep')) rmSync(root, { recursive: true, force: true });
    else process.stderr.write(`kept: ${root}\n`);
  }
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
