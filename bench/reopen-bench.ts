// A run reopened in the editor: the extension's code path without VS Code (RunStore over a
// followed RunIndex, groups prepared on the what-if engine's worker threads, the persisted index in
// a storage folder of its own), each open in a fresh process (a new window):
//   first open   empty storage: reads the logs, prepares and scores every question, saves the index;
//   second open  the run unchanged: reads the saved index and summaries (target: explorer data —
//                steps, questions, gates — ready in < 2 s; host heap < 150 MB; event-loop lag
//                < 50 ms throughout);
//   idle         the host's CPU time over 10 s after the second open, the run open and followed.
//   node scripts/build.mjs && node --import tsx bench/reopen-bench.ts [--rollouts 2000000] [--bytes 600] [--keep] [--checkpoint GROUPS] [--storage DIR]
// --storage DIR: the persisted index of an earlier first open of the same run (kept with --keep,
// by this or another build of the same index format): the first open is skipped, and only the
// second opens are measured against it (another build's second open compares on the same bytes).
// The run: native group records of 64 roll-outs (bench/make-groups.ts), 32 questions a step, one
// file, kept in .bench/ between runs (--keep keeps the storage too). Prints one JSON line with
// `rows` for bench/run.mjs.
import { execFileSync, spawnSync } from 'node:child_process';
import { errorStack } from '../src/util/errors';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};

interface Phase {
  indexMs: number;
  readyMs: number;
  /** The process's CPU time until ready (the host thread; the workers prepare nothing on a second open). */
  readyCpuMs: number;
  saveMs: number;
  /** The host's event-loop lag while the index is saved (max). */
  saveMaxLagMs: number;
  savedBytes: number;
  peakHeapMB: number;
  /** heapUsed after a full garbage collection once ready: what the host keeps for the run. */
  retainedHeapMB: number;
  /** Typed arrays' memory (outside the JS heap: the summaries' and the saved index's columns) kept once ready. */
  retainedArrayBuffersMB: number;
  maxLagMs: number;
  idleCpuMs: number;
  /** The same over the next 10 s, once V8's collector has settled after the open. */
  laterIdleCpuMs: number;
  persisted: string;
  /** The explicit save's records: in all, and copied from the index it replaced (saved part way through the open). */
  lastWrite?: { bytes: number; copied: number; chunks: number };
  bytesRead: number;
  groups: number;
  rollouts: number;
  load: number;
}

async function child(run: string, storage: string): Promise<void> {
  const { RunStore } = await import('../src/extension/model/run-store');
  const { WhatIfEngine } = await import('../src/extension/workers/whatif-engine');
  const { defaultParams } = await import('../src/extension/slider-params');
  const lag = monitorEventLoopDelay({ resolution: 10 });
  let peakHeap = 0;
  const sample = () => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  };
  const sampler = setInterval(sample, 25);
  const engine = new WhatIfEngine({ workers: 2, script: resolve('dist/whatif-worker.js') });
  const store = new RunStore({
    configuredOperator: () => 'core',
    params: defaultParams,
    saveDelayMs: 60_000, // saved explicitly below, timed (and as it goes: checkpoints)
    checkpointGroups: flag('checkpoint') ? Number(flag('checkpoint')) : undefined,
    persistDir: () => storage,
    prepare: (runId, item, opts) => engine.prepare(runId, item, opts),
    analyse: (records) => engine.analyse(records),
  });
  lag.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = store.add(run, 'opened');
  await store.idle();
  const indexMs = performance.now() - t0;
  await store.summariesDone();
  const readyMs = performance.now() - t0;
  const cpuReady = process.cpuUsage(cpu0);
  const readyCpuMs = (cpuReady.user + cpuReady.system) / 1000;
  if (r.summaries.size !== r.index!.size) throw new Error(`${r.summaries.size} of ${r.index!.size} questions scored`);
  sample();
  const saveLag = monitorEventLoopDelay({ resolution: 10 });
  saveLag.enable();
  const t1 = performance.now();
  const savedBytes = r.savedVersion === r.version ? 0 : await store.save(r);
  const saveMs = performance.now() - t1;
  saveLag.disable();
  sample();
  lag.disable();
  const maxLagMs = lag.max / 1e6;
  // Twice, a moment apart: array buffers' memory is released by a sweeper that runs after the collection.
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((res) => setTimeout(res, 200));
  (globalThis as { gc?: () => void }).gc?.();
  const kept = process.memoryUsage();
  const retainedHeapMB = kept.heapUsed / 2 ** 20;
  const retainedArrayBuffersMB = kept.arrayBuffers / 2 ** 20;
  clearInterval(sampler);
  // idle: the run open and followed, nothing written (the bench's own sampler stopped)
  const c0 = process.cpuUsage();
  await new Promise((res) => setTimeout(res, 10_000));
  const c = process.cpuUsage(c0);
  const c1 = process.cpuUsage();
  await new Promise((res) => setTimeout(res, 10_000));
  const later = process.cpuUsage(c1);
  const out: Phase = {
    indexMs,
    readyMs,
    readyCpuMs,
    saveMs,
    saveMaxLagMs: savedBytes ? saveLag.max / 1e6 : 0,
    savedBytes,
    peakHeapMB: peakHeap / 2 ** 20,
    retainedHeapMB,
    retainedArrayBuffersMB,
    maxLagMs,
    idleCpuMs: (c.user + c.system) / 1000,
    laterIdleCpuMs: (later.user + later.system) / 1000,
    persisted: r.index!.persisted.state,
    lastWrite: savedBytes ? r.index!.lastWrite : undefined,
    bytesRead: r.index!.bytesReadAtOpen,
    groups: r.index!.size,
    rollouts: r.rollouts,
    load: loadavg()[0],
  };
  store.dispose();
  await engine.dispose();
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

function phase(run: string, storage: string): Phase {
  const more = flag('checkpoint') ? ['--checkpoint', flag('checkpoint')!] : [];
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/reopen-bench.ts', '--child', run, '--storage', storage, ...more], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`reopen-bench child failed (${r.status})`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Phase;
}

async function main(): Promise<void> {
  if (flag('child')) return child(flag('child')!, flag('storage')!);
  const rollouts = Number(flag('rollouts') ?? 2_000_000);
  const bytes = flag('bytes') ?? '600';
  const groups = Math.ceil(rollouts / 64);
  mkdirSync('.bench', { recursive: true });
  const dir = resolve(`.bench/reopen-${groups}x64-${bytes}`);
  const file = join(dir, 'groups.jsonl');
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    execFileSync(process.execPath, ['--import', 'tsx', 'bench/make-groups.ts', `${file}.part`, String(groups), '64', bytes, '7'], { stdio: 'inherit' });
    execFileSync('mv', [`${file}.part`, file]);
  }
  const given = flag('storage');
  const storage = given ? resolve(given) : mkdtempSync(join(tmpdir(), 'cl-reopen-storage-'));
  try {
    if (given) {
      const seconds = [phase(dir, storage), phase(dir, storage), phase(dir, storage)];
      for (const s of seconds) process.stderr.write(`second open: ${JSON.stringify(s)}\n`);
      if (seconds.some((s) => s.persisted !== 'restored' || s.bytesRead !== 0)) throw new Error('the second open read the logs');
      process.stdout.write(`${JSON.stringify({ seconds, load: loadavg() })}\n`);
      return;
    }
    const first = phase(dir, storage);
    process.stderr.write(`first open: ${JSON.stringify(first)}\n`);
    const seconds = [phase(dir, storage), phase(dir, storage), phase(dir, storage)];
    for (const s of seconds) process.stderr.write(`second open: ${JSON.stringify(s)}\n`);
    if (seconds.some((s) => s.persisted !== 'restored' || s.bytesRead !== 0)) throw new Error('the second open read the logs');
    const second = [...seconds].sort((a, b) => a.readyMs - b.readyMs)[1];
    const maxLag = Math.max(...seconds.map((s) => s.maxLagMs));
    const peak = Math.max(...seconds.map((s) => s.peakHeapMB));
    const logMiB = statSync(file).size / 2 ** 20;
    const saved = readdirSync(storage).reduce((n, f) => n + statSync(join(storage, f)).size, 0);
    const M = (first.rollouts / 1e6).toFixed(2);
    const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(2)}%`;
    const rows: [string, string, string, string, string, boolean | null][] = [
      [`second open of an unchanged run, ${M} M roll-outs (${logMiB.toFixed(0)} MiB of logs): explorer data (steps, questions, gates) ready`, `${(second.readyMs / 1000).toFixed(2)} s (median of 3; index ${(second.indexMs / 1000).toFixed(2)} s; ${(second.readyCpuMs / 1000).toFixed(2)} CPU s)`, `${(first.readyMs / 1000).toFixed(1)} s (first open; index ${(first.indexMs / 1000).toFixed(1)} s)`, pct(second.readyMs, first.readyMs), '< 2 s', second.readyMs < 2000],
      [`host heap during the second open, ${M} M`, `${peak.toFixed(0)} MB peak (${Math.max(...seconds.map((s) => s.retainedHeapMB)).toFixed(0)} MB kept once ready, and ${Math.max(...seconds.map((s) => s.retainedArrayBuffersMB)).toFixed(0)} MB of typed arrays outside the heap; first open ${first.retainedHeapMB.toFixed(0)} MB kept after its save)`, `${first.peakHeapMB.toFixed(0)} MB (first open)`, pct(peak, first.peakHeapMB), '< 150 MB', peak < 150],
      [`host event-loop lag during the second open, ${M} M`, `${maxLag.toFixed(1)} ms max`, `${first.maxLagMs.toFixed(1)} ms (first open)`, '—', '< 50 ms', maxLag < 50],
      [`host CPU over 10 s idle after the second open, ${M} M (run open, followed)`, `${Math.max(...seconds.map((s) => s.idleCpuMs)).toFixed(0)} ms (the next 10 s: ${Math.max(...seconds.map((s) => s.laterIdleCpuMs)).toFixed(0)} ms)`, '10,000 ms (one core)', pct(Math.max(...seconds.map((s) => s.idleCpuMs)), 10_000), 'none', null],
      [`saved index + summaries on disk per million roll-outs (saved in ${(first.saveMs / 1000).toFixed(1)} s)`, `${(saved / 2 ** 20 / (first.rollouts / 1e6)).toFixed(1)} MiB`, `${(logMiB / (first.rollouts / 1e6)).toFixed(0)} MiB of logs`, pct(saved, logMiB * 2 ** 20), 'stated', null],
    ];
    process.stdout.write(`${JSON.stringify({ rows, first, seconds, load: loadavg() })}\n`);
  } finally {
    if (!args.includes('--keep') && !given) rmSync(storage, { recursive: true, force: true });
  }
}

void main().catch((err) => {
  process.stderr.write(`${errorStack(err)}\n`);
  process.exit(1);
});
