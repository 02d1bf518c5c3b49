// `npm run bench`: every performance target, each measured against its baseline in the same run
// (these machines are 2 cores and noisy: ratios, not absolute times, are what we record).
// Figures go to stdout as a Markdown table and to .bench/results.json; BENCHMARKS.md records them.
//
//   node bench/run.mjs [--quick] [--only core,sweep,big,answers,budget,logs,serve,extension,activation,whatif,cache,reopen,compare,tokens]
//
// --quick uses smaller inputs (a smoke run of the harness, not figures to record).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync, createWriteStream } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyArg = args.includes('--only') ? args[args.indexOf('--only') + 1].split(',') : null;
const want = (name) => !onlyArg || onlyArg.includes(name);
const DIR = '.bench';
mkdirSync(DIR, { recursive: true });
const CLI = 'dist/cli.js';
const rows = [];
const results = { machine: machine(), when: new Date().toISOString(), quick, figures: {} };

function machine() {
  let numpy = '?';
  try {
    numpy = execFileSync('python3', ['-c', 'import numpy, sys; print(numpy.__version__, sys.version.split()[0])'], { encoding: 'utf8' }).trim();
  } catch {}
  return { cpu: cpus()[0]?.model, cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, numpyPython: numpy };
}

function wall(cmd, argv, opts = {}) {
  const t = process.hrtime.bigint();
  const r = spawnSync(cmd, argv, { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', opts.keepOut ? 'pipe' : 'ignore', 'pipe'], env: { ...process.env, ...(opts.env ?? {}) } });
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} failed: ${r.stderr}`);
  return { s, out: r.stdout };
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function repeat(k, f) {
  return median(Array.from({ length: k }, f));
}
function row(what, ours, baseline, ratio, target, ok) {
  rows.push({ what, ours, baseline, ratio, target, ok });
  console.error(`${ok === null ? '    ' : ok ? 'ok  ' : 'MISS'} ${what}: ${ours} vs ${baseline} → ${ratio} (target ${target})`);
}

function makeGroups(file, groups, n = 64, bytes = 2048, seed = 1) {
  if (existsSync(file)) return;
  execFileSync(process.execPath, ['--import', 'tsx', 'bench/make-groups.ts', file, String(groups), String(n), String(bytes), String(seed)], { stdio: 'inherit' });
}

// 1. CoRE from raw text at two lengths: the whole `score` process (node start-up, reading and
//    parsing included) against the CoRE a researcher would write with scikit-learn
//    (bench/sklearn-baseline.py: TfidfVectorizer char 4-grams, scipy sparse within-class
//    products, a vectorised replicator), compute only, measured in the same run, interleaved.
//    Short: 120 groups × 64 × ~1.5 KB; long: 48 × 64 with lognormal lengths (median 12 KB, cap
//    40 KB), as reasoning models write. The same script's vectorised-numpy TF-IDF (--impl numpy)
//    is reported beside it. Best of rounds for every side (noise only ever adds time).
const WORKLOADS = quick
  ? [{ name: 'short', groups: 12, bytes: '1536', seed: 1, label: '12 × 64 × ~1.5 KB' }, { name: 'long', groups: 4, bytes: 'lognormal:12288:40960', seed: 2, label: '4 × 64 × ~12 KB (lognormal, ≤ 40 KB)' }]
  : [{ name: 'short', groups: 120, bytes: '1536', seed: 1, label: '120 × 64 × ~1.5 KB' }, { name: 'long', groups: 48, bytes: 'lognormal:12288:40960', seed: 2, label: '48 × 64 × ~12 KB (lognormal, ≤ 40 KB)' }];
/** A python3 with scikit-learn and scipy: the one on PATH, else Debian's (python3-sklearn). */
function sklearnPython() {
  for (const py of ['python3', '/usr/bin/python3']) {
    const r = spawnSync(py, ['-c', 'import sklearn, scipy, numpy; print(sklearn.__version__, scipy.__version__, numpy.__version__)'], { encoding: 'utf8' });
    if (r.status === 0) return { py, versions: r.stdout.trim() };
  }
  return null;
}
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
/** Wall and CPU (user + sys of the process and its threads) of one child process. */
function timed(cmd, argv) {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S', cmd, ...argv], { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} failed: ${r.stderr}`);
  const [e, u, sy] = r.stderr.trim().split('\n').pop().split(' ').map(Number);
  return { wall: e, cpu: u + sy };
}
if (want('core')) {
  const sk = sklearnPython();
  results.figures.throughput = { sklearn: sk?.versions ?? null, loadBefore: loadavg(), workloads: {} };
  for (const w of WORKLOADS) {
    const file = join(DIR, `${w.name}-${w.groups}.jsonl`);
    makeGroups(file, w.groups, 64, w.bytes, w.seed);
    const sizeMiB = statSync(file).size / 2 ** 20;
    const ours = [];
    const base = { sklearn: [], numpy: [] };
    const rounds = quick ? 1 : 2;
    const baseline = (impl) => JSON.parse(execFileSync(sk.py, ['bench/sklearn-baseline.py', file, '--time', '--impl', impl], { encoding: 'utf8', maxBuffer: 1 << 26 }).trim());
    for (let k = 0; k < rounds; k++) {
      if (sk) {
        // The long workload's scikit-learn run once (~30 s; its noise is small against its
        // length), every other baseline once per round.
        if (k === 0 || w.name !== 'long') base.sklearn.push(baseline('sklearn'));
        base.numpy.push(baseline('numpy'));
      }
      for (let j = 0; j < (quick ? 2 : 3); j++) ours.push(timed(process.execPath, [CLI, 'score', file, '--operators', 'core', '--no-cache']));
    }
    const best = (xs, f) => Math.min(...xs.map(f));
    const oursWall = best(ours, (o) => o.wall);
    const oursCpu = best(ours, (o) => o.cpu);
    const fig = { groups: w.groups, sizeMiB, oursWallS: oursWall, oursCpuS: oursCpu, oursWalls: ours.map((o) => o.wall), load: loadavg() };
    if (sk) {
      fig.sklearnComputeS = best(base.sklearn, (b) => b.compute_seconds);
      fig.numpyComputeS = best(base.numpy, (b) => b.compute_seconds);
      fig.sklearnCpuS = best(base.sklearn, (b) => b.cpu_seconds);
      fig.numpyCpuS = best(base.numpy, (b) => b.cpu_seconds);
      fig.ratioSklearn = fig.sklearnComputeS / oursWall;
      fig.ratioNumpy = fig.numpyComputeS / oursWall;
      // CPU seconds against CPU seconds: what a loaded machine disturbs least. The baseline is
      // one thread, ours two, so on a quiet machine the wall ratio is above this one.
      fig.cpuRatioSklearn = fig.sklearnCpuS / oursCpu;
      fig.cpuRatioNumpy = fig.numpyCpuS / oursCpu;
    }
    results.figures.throughput.workloads[w.name] = fig;
    const ours1 = `${oursWall.toFixed(2)} s wall (${oursCpu.toFixed(2)} CPU s), ${(oursWall / w.groups * 1000).toFixed(1)} ms/group`;
    if (!sk) {
      row(`CoRE from raw text, ${w.label}: scikit-learn baseline`, ours1, 'scikit-learn/scipy not installed (apt-get install python3-sklearn)', '—', '≥ 15×', false);
      continue;
    }
    row(`CoRE from raw text, ${w.label} (${sizeMiB.toFixed(0)} MiB), load ${fig.load}`, ours1, `${fig.sklearnComputeS.toFixed(2)} s (${fig.sklearnCpuS.toFixed(2)} CPU s), scikit-learn compute`, `${fig.ratioSklearn.toFixed(1)}× (CPU ${fig.cpuRatioSklearn.toFixed(1)}×)`, '≥ 15×', fig.ratioSklearn >= 15);
    row(`  same, against the vectorised-numpy TF-IDF variant`, ours1, `${fig.numpyComputeS.toFixed(2)} s (${fig.numpyCpuS.toFixed(2)} CPU s), numpy compute`, `${fig.ratioNumpy.toFixed(1)}× (CPU ${fig.cpuRatioNumpy.toFixed(1)}×)`, '(shown, not a target)', null);
  }
}
const scoreWall = null;

// The κ sweep and the answer classes run on 200 groups × 64 × 2 KB.
const coreGroups = quick ? 40 : 200;
const coreFile = join(DIR, `core-${coreGroups}.jsonl`);
if (want('sweep') || want('answers')) makeGroups(coreFile, coreGroups);

// 2. An 11-point κ sweep against one scoring pass (both whole CLI processes, from the texts:
// --no-cache, so a repeat does not read the run's persisted cache instead).
if (want('sweep')) {
  const one = scoreWall ?? repeat(3, () => wall(process.execPath, [CLI, 'score', coreFile, '--operators', 'core', '--no-cache']).s);
  const sweep = repeat(quick ? 1 : 3, () => wall(process.execPath, [CLI, 'sweep', coreFile, '--kappa', '0:1:0.1', '--operators', 'core', '--no-cache']).s);
  const ratio = sweep / one;
  results.figures.sweep = { scoreWallS: one, sweepWallS: sweep, ratio };
  row('11-point κ sweep vs one scoring pass', `${sweep.toFixed(2)} s`, `${one.toFixed(2)} s`, `${ratio.toFixed(2)}×`, '≤ 3×', ratio <= 3);
}

// 3. score on a 1 GB native log in bounded memory (peak RSS of the whole process, workers included).
if (want('big')) {
  const mb = quick ? 64 : 1024;
  const bigFile = join(DIR, `native-${mb}mb.jsonl`);
  if (!existsSync(bigFile)) {
    // Repeat 50 distinct groups under fresh question ids until the file reaches the size.
    const seedFile = join(DIR, 'seed-50.jsonl');
    makeGroups(seedFile, 50, 64, 2048, 7);
    const seeds = readFileSync(seedFile, 'utf8').trim().split('\n');
    const out = createWriteStream(bigFile);
    let written = 0;
    for (let k = 0; written < mb * 2 ** 20; k++) {
      const line = seeds[k % seeds.length].replace(/"question_id":"[^"]*"/, `"question_id":"big/${k}"`).replace(/"step":\d+/, `"step":${Math.floor(k / 500)}`) + '\n';
      written += Buffer.byteLength(line);
      if (!out.write(line)) await new Promise((r) => out.once('drain', r));
    }
    await new Promise((r) => out.end(r));
  }
  const rssFile = join(DIR, 'maxrss.txt');
  const t = wall(process.execPath, ['--require', './bench/maxrss.cjs', CLI, 'score', bigFile, '--operators', 'majority,core', '--no-cache'], { env: { CL_MAXRSS_FILE: rssFile } });
  const rssMb = Number(readFileSync(rssFile, 'utf8')) / 1024;
  const sizeMb = statSync(bigFile).size / 2 ** 20;
  results.figures.big = { fileMiB: sizeMb, wallS: t.s, peakRssMiB: rssMb };
  row(`score on a ${sizeMb.toFixed(0)} MiB native log`, `peak RSS ${rssMb.toFixed(0)} MiB (${t.s.toFixed(0)} s)`, '—', '—', 'RSS < 500 MB', rssMb * 1.048576 < 500);
}

// 4. Answer classes of a 64-roll-out group against that group's CoRE scoring time.
if (want('answers')) {
  const classes = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', 'bench/answers-bench.ts'], { encoding: 'utf8' }).trim().split('\n').pop());
  const perGroup = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', 'bench/core-per-group.ts', coreFile], { encoding: 'utf8' }).trim());
  const ratioCold = classes.classes_ms_per_group_cold / perGroup.core_ms_per_group;
  const ratioWarm = classes.classes_ms_per_group_warm / perGroup.core_ms_per_group;
  // Extraction + classes (cold), the whole answers share of a group's scoring.
  const ratioAnswers = classes.answers_ms_per_group_cold / perGroup.core_ms_per_group;
  results.figures.answers = { ...classes, ...perGroup, ratioCold, ratioWarm, ratioAnswers };
  row('answer classes per group vs CoRE scoring of that group', `${classes.classes_ms_per_group_cold.toFixed(3)} ms cold, ${classes.classes_ms_per_group_warm.toFixed(4)} ms warm`, `${perGroup.core_ms_per_group.toFixed(2)} ms`, `${(ratioCold * 100).toFixed(1)}% cold, ${(ratioWarm * 100).toFixed(2)}% warm`, '< 10%', ratioCold < 0.1);
  row('answers (extraction + classes, cold) per group vs CoRE scoring', `${classes.answers_ms_per_group_cold.toFixed(3)} ms (extraction ${classes.extract_ms_per_group.toFixed(3)} ms)`, `${perGroup.core_ms_per_group.toFixed(2)} ms`, `${(ratioAnswers * 100).toFixed(1)}%`, '< 10%', ratioAnswers < 0.1);
  row('slowest adversarial answer (200 KB degenerate responses, 100 KB answers, nesting, exponents)', `${classes.adversarial_max_ms.toFixed(1)} ms (${classes.adversarial_worst})`, '—', '—', '< 50 ms', classes.adversarial_max_ms < 50);
}

// 5. Run logs: indexing against a bare readline + JSON.parse loop; offset fetches.
if (want('logs') && existsSync('bench/logs-bench.ts')) {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'bench/logs-bench.ts', '--size-mb', quick ? '64' : '1024'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const r = JSON.parse(out.trim().split('\n').pop());
  results.figures.logs = r;
  for (const [what, ours, base, ratio, target, ok] of r.rows ?? []) row(what, ours, base, ratio, target, ok);
}

// 6. The reward worker: one step of 32 groups × 64 roll-outs through serve --stdio from Python.
if (want('serve') && existsSync('bench/serve-bench.py')) {
  const out = execFileSync('python3', ['bench/serve-bench.py', '--cli', CLI], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const r = JSON.parse(out.trim().split('\n').pop());
  results.figures.serve = r;
  const ratio = r.ratio ?? r.worker_seconds / r.baseline_seconds;
  row('reward worker round trip, 32 × 64 × 2 KB, vs numpy', `${(r.worker_seconds * 1000).toFixed(0)} ms`, `${(r.baseline_seconds * 1000).toFixed(0)} ms`, `${(ratio * 100).toFixed(1)}%`, '< 10%', ratio < 0.1);
}

// 7. Extension host work that needs no VS Code (re-score after a slider move, explorer expansion).
if (want('extension') && existsSync('bench/extension-bench.ts')) {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'bench/extension-bench.ts'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const r = JSON.parse(out.trim().split('\n').pop());
  results.figures.extension = r;
  for (const [what, ours, base, ratio, target, ok] of r.rows ?? []) row(what, ours, base, ratio, target, ok);
}

// 7b. Extension start-up: the bundle loaded and activated outside VS Code, against the bundle of the
//     commit before the composition-root activate and an empty extension (bench/activation-bench.mjs).
if (want('activation') && existsSync('bench/activation-bench.mjs')) {
  const out = execFileSync(process.execPath, ['bench/activation-bench.mjs', '--rounds', quick ? '3' : '21'], { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] });
  const r = JSON.parse(out.trim().split('\n').pop());
  results.figures.activation = r.figures;
  for (const [what, ours, base, ratio, target, ok] of r.rows ?? []) row(what, ours, base, ratio, target, ok);
}

// 9. The persisted run cache: report twice, a κ re-score from persisted features, the cache's size;
//    the host's cost of an index change on a 256,000-roll-out followed run.
if (want('cache') && existsSync('bench/cache-bench.ts')) {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'bench/cache-bench.ts', '--rollouts', quick ? '64000' : '2000000'], { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] });
  const r = JSON.parse(out.trim().split('\n').pop());
  results.figures.cache = r;
  for (const [what, ours, base, ratio, target, ok] of r.rows ?? []) row(what, ours, base, ratio, target, ok);
}

// 9b. A run reopened in the editor (reopen-bench.ts): the second open of an unchanged run from its
//     saved index against the first open, host heap, event-loop lag, idle CPU, the index's size.
if (want('reopen') && existsSync('bench/reopen-bench.ts')) {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'bench/reopen-bench.ts', '--rollouts', quick ? '64000' : '2000000'], { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] });
  const r = JSON.parse(out.trim().split('\n').pop());
  results.figures.reopen = r;
  for (const [what, ours, base, ratio, target, ok] of r.rows ?? []) row(what, ours, base, ratio, target, ok);
}

// 8. Run-wide what-ifs: re-score 10,000 groups with a new κ, host lag, a 6 × 6 κ × τ sweep.
if (want('whatif') && existsSync('bench/whatif-bench.ts')) {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'bench/whatif-bench.ts', '--groups', quick ? '1000' : '10000'], { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] });
  const r = JSON.parse(out.trim().split('\n').pop());
  results.figures.whatif = r;
  for (const [what, ours, base, ratio, target, ok] of r.rows ?? []) row(what, ours, base, ratio, target, ok);
}

// 9. Two runs side by side (compare-bench.ts): 2 × 10,000 groups from cached health records.
if (want('compare') && existsSync('bench/compare-bench.ts')) {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'bench/compare-bench.ts', '--groups', quick ? '1000' : '10000'], { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] });
  const r = JSON.parse(out.trim().split('\n').pop());
  results.figures.compare = r;
  for (const [what, ours, base, ratio, target, ok] of r.rows ?? []) row(what, ours, base, ratio, target, ok);
}

// 10. Token confidence on a roll-out document (tokens-bench.ts): 40 KB, 16 K tokens.
if (want('tokens') && existsSync('bench/tokens-bench.ts')) {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'bench/tokens-bench.ts'], { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] });
  const r = JSON.parse(out.trim().split('\n').pop());
  results.figures.tokens = r;
  for (const [what, ours, base, ratio, target, ok] of r.rows ?? []) row(what, ours, base, ratio, target, ok);
}

// 11. The answers' work budget (budget-bench.ts): ns per unit over the answer suites' pairs, the
//     budgets' margin over the largest decided parse and comparison, a spent budget's time.
if (want('budget') && existsSync('bench/budget-bench.ts')) {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'bench/budget-bench.ts'], { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] });
  const r = JSON.parse(out.trim().split('\n').pop());
  results.figures.budget = r;
  for (const [what, ours, base, ratio, target, ok] of r.rows ?? []) row(what, ours, base, ratio, target, ok);
}

writeFileSync(join(DIR, 'results.json'), JSON.stringify(results, null, 2));
const m = results.machine;
const sk = results.figures.throughput?.sklearn;
console.log(`Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB; Node ${m.node}; numpy/python ${m.numpyPython}${sk ? `; sklearn/scipy/numpy ${sk}` : ''}; load before the run ${results.figures.throughput?.loadBefore ?? '?'}; ${results.when}${quick ? ' (quick)' : ''}\n`);
console.log('| what | ours | baseline | ratio | target | met |\n|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.what} | ${r.ours} | ${r.baseline} | ${r.ratio} | ${r.target} | ${r.ok === null ? '—' : r.ok ? 'yes' : '**no**'} |`);
