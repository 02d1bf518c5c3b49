// `npm run bench`: every performance target, each measured against its baseline in the same run
// (these machines are 2 cores and noisy: ratios, not absolute times, are what we record).
// Figures go to stdout as a Markdown table and to .bench/results.json; BENCHMARKS.md records them.
//
//   node bench/run.mjs [--quick] [--only core,sweep,big,answers,logs,serve,extension,whatif]
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
  console.error(`${ok ? 'ok  ' : 'MISS'} ${what}: ${ours} vs ${baseline} → ${ratio} (target ${target})`);
}

function makeGroups(file, groups, n = 64, bytes = 2048, seed = 1) {
  if (existsSync(file)) return;
  execFileSync(process.execPath, ['--import', 'tsx', 'bench/make-groups.ts', file, String(groups), String(n), String(bytes), String(seed)], { stdio: 'inherit' });
}

// 1. CoRE from raw text: the whole CLI process (start-up and parsing included) against the numpy
//    baseline's compute alone, on the same groups (N = 64, ~2 KB texts).
const coreGroups = quick ? 40 : 200;
const coreFile = join(DIR, `core-${coreGroups}.jsonl`);
if (want('core') || want('sweep') || want('answers')) makeGroups(coreFile, coreGroups);
let scoreWall = null;
if (want('core')) {
  const base = repeat(quick ? 1 : 3, () => JSON.parse(wall('python3', ['bench/baseline.py', coreFile, '--operators', 'core', '--time'], { keepOut: true }).out).compute_seconds);
  scoreWall = repeat(quick ? 3 : 5, () => wall(process.execPath, [CLI, 'score', coreFile, '--operators', 'core']).s);
  const ratio = base / scoreWall;
  results.figures.core = { groups: coreGroups, baselineComputeS: base, cliWallS: scoreWall, speedup: ratio };
  row(`CoRE from raw text, ${coreGroups} groups × 64 × 2 KB`, `${scoreWall.toFixed(2)} s (CLI wall)`, `${base.toFixed(2)} s (numpy compute)`, `${ratio.toFixed(1)}×`, '≥ 15×', ratio >= 15);
}

// 2. An 11-point κ sweep against one scoring pass (both whole CLI processes).
if (want('sweep')) {
  const one = scoreWall ?? repeat(3, () => wall(process.execPath, [CLI, 'score', coreFile, '--operators', 'core']).s);
  const sweep = repeat(quick ? 1 : 3, () => wall(process.execPath, [CLI, 'sweep', coreFile, '--kappa', '0:1:0.1', '--operators', 'core']).s);
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
  const t = wall(process.execPath, ['--require', './bench/maxrss.cjs', CLI, 'score', bigFile, '--operators', 'majority,core'], { env: { CL_MAXRSS_FILE: rssFile } });
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

// 8. Run-wide what-ifs (issue 6): re-score 10,000 groups with a new κ, host lag, a 6 × 6 κ × τ sweep.
if (want('whatif') && existsSync('bench/whatif-bench.ts')) {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'bench/whatif-bench.ts', '--groups', quick ? '1000' : '10000'], { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] });
  const r = JSON.parse(out.trim().split('\n').pop());
  results.figures.whatif = r;
  for (const [what, ours, base, ratio, target, ok] of r.rows ?? []) row(what, ours, base, ratio, target, ok);
}

writeFileSync(join(DIR, 'results.json'), JSON.stringify(results, null, 2));
const m = results.machine;
console.log(`Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB; Node ${m.node}; numpy/python ${m.numpyPython}; ${results.when}${quick ? ' (quick)' : ''}\n`);
console.log('| what | ours | baseline | ratio | target | met |\n|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.what} | ${r.ours} | ${r.baseline} | ${r.ratio} | ${r.target} | ${r.ok ? 'yes' : '**no**'} |`);
