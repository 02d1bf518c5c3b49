// Extension start-up outside VS Code: the built bundle (dist/extension.js) loaded and activated in
// a fresh Node process with a stand-in 'vscode' module (bench/vscode-stub.cjs, through
// bench/activate-once.cjs), against, in the same run and interleaved, (1) the bundle of a baseline
// commit built the same way (default: d754aa3, the last commit before the composition-root
// `activate`, so the figure says whether the redesign made start-up grow), and (2) an empty
// extension (the floor: Node and the stand-in alone). Medians over rounds. Prints one JSON line
// with `rows` for bench/run.mjs.
//
//   node bench/activation-bench.mjs [--against REF] [--rounds N]
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';

const args = process.argv.slice(2);
const opt = (name, d) => (args.includes(name) ? args[args.indexOf(name) + 1] : d);
const REF = opt('--against', 'd754aa3');
const ROUNDS = Number(opt('--rounds', '15'));
const DIR = resolve('.bench');
mkdirSync(DIR, { recursive: true });
const ours = resolve('dist/extension.js');
if (!existsSync(ours)) throw new Error('dist/extension.js is missing: run npm run build');

/** The extension bundle of a commit, built with the options of scripts/build.mjs (cached by commit). */
async function bundleAt(ref) {
  const commit = execFileSync('git', ['rev-parse', '--short=12', ref], { encoding: 'utf8' }).trim();
  const out = join(DIR, `extension-${commit}`, 'dist', 'extension.js');
  if (existsSync(out)) return { commit, file: out };
  const src = mkdtempSync(join(tmpdir(), 'cl-activation-src-'));
  try {
    execFileSync('bash', ['-c', `git archive ${commit} src | tar -x -C ${src}`]);
    symlinkSync(resolve('node_modules'), join(src, 'node_modules'));
    await esbuild.build({
      entryPoints: { extension: join(src, 'src/extension/extension.ts') },
      outdir: join(DIR, `extension-${commit}`, 'dist'),
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      external: ['vscode'],
      minify: true,
      logLevel: 'warning',
      legalComments: 'none',
      plugins: [{ name: 'mathjs-outside', setup: (b) => b.onResolve({ filter: /^mathjs$/ }, () => ({ path: './mathjs.js', external: true })) }],
    });
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
  return { commit, file: out };
}

const empty = join(DIR, 'extension-empty', 'dist', 'extension.js');
mkdirSync(join(DIR, 'extension-empty', 'dist'), { recursive: true });
writeFileSync(empty, 'exports.activate = () => ({});\n');
const base = await bundleAt(REF);
const candidates = [
  { name: 'ours', file: ours },
  { name: 'baseline', file: base.file },
  { name: 'empty', file: empty },
];
const samples = Object.fromEntries(candidates.map((c) => [c.name, []]));
for (let r = 0; r < ROUNDS + 1; r++) {
  // each round in a new order: no candidate always follows the same one
  const order = r % 2 ? [...candidates].reverse() : candidates;
  for (const c of order) {
    const t = process.hrtime.bigint();
    const p = spawnSync(process.execPath, ['bench/activate-once.cjs', c.file], { encoding: 'utf8' });
    const wall = Number(process.hrtime.bigint() - t) / 1e6;
    if (p.status !== 0) throw new Error(`${c.name}: activation failed: ${p.stderr}`);
    if (r > 0) samples[c.name].push({ ...JSON.parse(p.stdout), wall }); // round 0 warms the file cache
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const m = (name, k) => median(samples[name].map((s) => s[k]));
const kb = (f) => (statSync(f).size / 1024).toFixed(0);
const fig = (name) => ({
  load: m(name, 'load'),
  activate: m(name, 'activate'),
  both: median(samples[name].map((s) => s.load + s.activate)),
  cpu: median(samples[name].map((s) => s.loadCpu + s.activateCpu)),
  activateCpu: m(name, 'activateCpu'),
  wall: m(name, 'wall'),
});
const o = fig('ours');
const b = fig('baseline');
const e = fig('empty');
const ms = (x) => `${x.toFixed(1)} ms`;
const rows = [
  [`extension start-up, CPU: load + activate of dist/extension.js (${kb(ours)} KB) vs the bundle of ${base.commit} (${kb(base.file)} KB), median of ${ROUNDS}`, ms(o.cpu), ms(b.cpu), `${(o.cpu / b.cpu).toFixed(2)}×`, '≤ 1.1× (does not grow)', o.cpu <= 1.1 * b.cpu],
  ['… wall time of the same (load + activate)', ms(o.both), ms(b.both), `${(o.both / b.both).toFixed(2)}×`, '—', null],
  ['… of which `activate(context)` until it returns, CPU', ms(o.activateCpu), ms(b.activateCpu), `${(o.activateCpu / b.activateCpu).toFixed(2)}×`, '—', null],
  ['whole process (Node start-up, stand-in, load, activate) vs an empty extension, wall', ms(o.wall), ms(e.wall), `+${(o.wall - e.wall).toFixed(0)} ms`, '—', null],
];
process.stdout.write(JSON.stringify({ rows, figures: { ours: o, baseline: { commit: base.commit, ...b }, empty: e, rounds: ROUNDS } }) + '\n');
