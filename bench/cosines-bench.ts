// Micro-benchmark of the within-class cosines (docs/contract.md#ec-and-core, step 1): the JavaScript path
// (`cosinesByClassJs`) against the WebAssembly kernel (`cosines` in src/engine/features/ngrams.wat),
// on the same groups and answer classes, interleaved (the order alternates by round), best of
// several rounds. Three measures:
//   cosines alone    `cosinesByClass` on rows kept in JS-owned arrays (the kernel copies them in)
//   rows + cosines   `tfidfRows` then `cosinesByClass`, as prepareGroup runs them (ASCII rows
//                    stay in the kernel's memory)
//   rows alone       `tfidfRows`: the cosines' share of the line above is the difference
// In this process, times are CPU time (process.cpuUsage, user + system), which a shared, noisy
// machine disturbs less than the wall clock; wall times are shown beside them. With --workers N
// the same runs in N worker threads at once (as `score` runs its pool: two on this machine), each
// on every N-th group; there only wall times mean anything (Node 20 has no per-thread CPU time).
// Input: .bench/core-200.jsonl (made here when missing: bench/make-groups.ts, 200 groups × 64).
// Usage: node --import tsx bench/cosines-bench.ts [GROUPS.jsonl] [--rounds 9] [--workers 2]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { cosinesByClass, ngramsWasmAvailable, setCosinesWasmEnabled, tfidfRows, type TfidfRows } from '../src/engine/features/tfidf';
import { prepareGroup, type Group } from '../src/engine';

interface Options {
  file: string;
  rounds: number;
  workers: number;
  /** In a worker: its index; it takes every `workers`-th group from there. */
  slice?: number;
}
type Key = 'js alone' | 'wasm alone' | 'js fresh' | 'wasm fresh' | 'rows';
const KEYS: Key[] = ['js alone', 'wasm alone', 'js fresh', 'wasm fresh', 'rows'];
type Times = Record<Key, { cpu: number; wall: number }>;
interface Result {
  groups: number;
  pairs: number;
  classes: number[];
  worst: number;
  best: Times;
}

function loadGroups(file: string, slice: number | undefined, workers: number): { texts: string[]; classes: number[][] }[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter((_, i) => slice === undefined || i % workers === slice)
    .map((l) => {
      const g = JSON.parse(l);
      const group: Group = { step: g.step, questionId: g.question_id, rollouts: g.rollouts.map((r: { response?: string }) => ({ response: r.response ?? '' })) };
      // The answer classes as the engine forms them (no reasoning vectors needed for that).
      const classes = prepareGroup(group, { reasoning: false }).classes.map((c) => [...c.members]);
      return { texts: group.rollouts.map((r) => r.response ?? ''), classes };
    });
}

/** JS-owned copies of a group's rows (the kernel's rows are views, valid until its next call). */
const own = (r: TfidfRows): TfidfRows => ({
  n: r.n,
  start: r.start.slice(0, r.n + 1),
  terms: r.terms.slice(0, r.start[r.n]),
  values: r.values.slice(0, r.start[r.n]),
  vocabularySize: r.vocabularySize,
  df: r.df.slice(0, r.vocabularySize),
});

function measure(opt: Options): Result {
  if (!ngramsWasmAvailable()) throw new Error('no WebAssembly on this thread: nothing to compare');
  const groups = loadGroups(opt.file, opt.slice, opt.workers);
  const rows = groups.map((g) => own(tfidfRows(g.texts)));
  const cosines = (wasm: boolean, i: number, fresh: boolean): Float64Array[] => {
    setCosinesWasmEnabled(wasm);
    try {
      return cosinesByClass(fresh ? tfidfRows(groups[i].texts) : rows[i], groups[i].classes);
    } finally {
      setCosinesWasmEnabled(true);
    }
  };
  // Agreement first (and warm-up): every cosine within 1e-12, on owned rows and on the kernel's own.
  let worst = 0;
  let pairs = 0;
  for (let i = 0; i < groups.length; i++) {
    const js = cosines(false, i, false);
    for (const fresh of [false, true]) {
      const wasm = cosines(true, i, fresh);
      js.forEach((c, k) => c.forEach((x, p) => (worst = Math.max(worst, Math.abs(x - wasm[k][p])))));
    }
    for (const c of js) pairs += c.length;
  }
  const time = (key: Key): { cpu: number; wall: number } => {
    setCosinesWasmEnabled(key.startsWith('wasm'));
    const c = process.cpuUsage();
    const t = performance.now();
    if (key.endsWith('alone')) for (let i = 0; i < groups.length; i++) cosinesByClass(rows[i], groups[i].classes);
    else if (key.endsWith('fresh')) for (const g of groups) cosinesByClass(tfidfRows(g.texts), g.classes);
    else for (const g of groups) tfidfRows(g.texts);
    const wall = performance.now() - t;
    const u = process.cpuUsage(c);
    setCosinesWasmEnabled(true);
    return { cpu: (u.user + u.system) / 1000 / groups.length, wall: wall / groups.length };
  };
  const best = Object.fromEntries(KEYS.map((k) => [k, { cpu: Infinity, wall: Infinity }])) as Times;
  for (let round = 0; round < opt.rounds; round++) {
    for (const key of round % 2 ? [...KEYS].reverse() : KEYS) {
      const r = time(key);
      best[key].cpu = Math.min(best[key].cpu, r.cpu);
      best[key].wall = Math.min(best[key].wall, r.wall);
    }
  }
  return { groups: groups.length, pairs, classes: groups.flatMap((g) => g.classes.map((c) => c.length)), worst, best };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const value = (flag: string, d: number) => (args.includes(flag) ? Number(args[args.indexOf(flag) + 1]) : d);
  const opt: Options = {
    file: args.find((a, i) => !a.startsWith('--') && !['--rounds', '--workers'].includes(args[i - 1])) ?? '.bench/core-200.jsonl',
    rounds: value('--rounds', 9),
    workers: value('--workers', 0),
  };
  if (!existsSync(opt.file)) {
    mkdirSync('.bench', { recursive: true });
    execFileSync(process.execPath, ['--import', 'tsx', 'bench/make-groups.ts', opt.file, '200'], { stdio: 'inherit' });
  }
  const load0 = loadavg();
  let results: Result[];
  if (opt.workers > 0) {
    results = await Promise.all(
      Array.from({ length: opt.workers }, (_, slice) => {
        // tsx's CommonJS hook in the worker (Node 20 runs a worker's .ts entry before --import hooks).
        const w = new Worker(`require('tsx/cjs'); require(${JSON.stringify(__filename)});`, { eval: true, workerData: { ...opt, slice } });
        return new Promise<Result>((resolve, reject) => {
          w.once('message', resolve);
          w.once('error', reject);
        });
      }),
    );
  } else results = [measure(opt)];

  const groups = results.reduce((s, r) => s + r.groups, 0);
  const sizes = results.flatMap((r) => r.classes);
  const worst = Math.max(...results.map((r) => r.worst));
  const pairs = results.reduce((s, r) => s + r.pairs, 0);
  // Per group: in workers, the mean of the threads' bests (each thread did its share at once).
  const mean = (key: Key, what: 'cpu' | 'wall') => results.reduce((s, r) => s + r.best[key][what], 0) / results.length;
  const ms = (v: number) => `${v.toFixed(3)} ms`;
  console.log(`${groups} groups from ${opt.file}; ${(sizes.length / groups).toFixed(1)} classes and ${(pairs / groups).toFixed(0)} within-class pairs per group (largest class ${Math.max(...sizes)}); wasm vs JS: largest difference ${worst.toExponential(2)}${worst <= 1e-12 ? '' : ' — MORE THAN 1e-12'}`);
  if (opt.workers > 0) {
    const wall = (key: Key) => mean(key, 'wall');
    console.log(`per group, in ${opt.workers} worker threads at once, best of ${opt.rounds} interleaved rounds (wall time, mean of the threads):`);
    console.log(`  cosines alone (rows copied in)   JS ${ms(wall('js alone'))}   wasm ${ms(wall('wasm alone'))}   ${(wall('js alone') / wall('wasm alone')).toFixed(2)}×`);
    console.log(`  tfidfRows + cosines              JS ${ms(wall('js fresh'))}   wasm ${ms(wall('wasm fresh'))}`);
    const js = wall('js fresh') - wall('rows');
    const wasm = wall('wasm fresh') - wall('rows');
    console.log(`  tfidfRows alone ${ms(wall('rows'))}: cosines JS ${ms(js)}, wasm ${ms(wasm)}   ${(js / wasm).toFixed(2)}×`);
  } else {
    const cpu = (key: Key) => mean(key, 'cpu');
    const wall = (key: Key) => mean(key, 'wall');
    console.log(`per group, best of ${opt.rounds} interleaved rounds (CPU time; wall in brackets):`);
    console.log(`  cosines alone (rows copied in)   JS ${ms(cpu('js alone'))} (${ms(wall('js alone'))})   wasm ${ms(cpu('wasm alone'))} (${ms(wall('wasm alone'))})   ${(cpu('js alone') / cpu('wasm alone')).toFixed(2)}×`);
    console.log(`  tfidfRows + cosines              JS ${ms(cpu('js fresh'))} (${ms(wall('js fresh'))})   wasm ${ms(cpu('wasm fresh'))} (${ms(wall('wasm fresh'))})`);
    const js = cpu('js fresh') - cpu('rows');
    const wasm = cpu('wasm fresh') - cpu('rows');
    console.log(`  tfidfRows alone ${ms(cpu('rows'))}: cosines JS ${ms(js)}, wasm ${ms(wasm)}   ${(js / wasm).toFixed(2)}×`);
  }
  console.log(`load average before ${load0.map((l) => l.toFixed(2)).join(' ')}, after ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  if (!(worst <= 1e-12)) process.exitCode = 1;
}

if (isMainThread) {
  main().catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
} else parentPort!.postMessage(measure(workerData as Options));
