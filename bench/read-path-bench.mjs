// The CLI's read path (ARCHITECTURE.md, "The CLI's read path") against another build of the CLI,
// in the same run, interleaved:
//   node bench/read-path-bench.mjs --base DIST_DIR [--rollouts 256000] [--bytes 600] [--rounds 3]
//
// DIST_DIR is the `dist/` of the build to compare with (e.g. the commit before a change to the
// read path, built in a worktree of its own). A run folder of native group records is generated
// (one file per step, 64 questions × 64 roll-outs of ~`bytes` bytes, as bench/cache-bench.ts);
// then, for each build, `score --operators majority` (the least scoring work, so the read path
// dominates) three ways: without the cache (`--no-cache`: list, read, assemble, score), building
// the cache (a fresh cache folder: the same, plus every group prepared whole and written), and
// from the cache (unchanged run: identities checked, features replayed, nothing parsed). Each
// figure is the best of `rounds` (noise only adds time); wall seconds and CPU seconds (user +
// system, all threads). Prints a Markdown table and one JSON line.
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const args = process.argv.slice(2);
const flag = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const base = flag('base');
if (!base) throw new Error('--base DIST_DIR: the dist/ of the build to compare with');
const rollouts = Number(flag('rollouts', '256000'));
const bytes = Number(flag('bytes', '600'));
const rounds = Number(flag('rounds', '3'));
const ours = resolve('dist/cli.js');
const theirs = resolve(base, 'cli.js');

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 4294967296;
  };
}
const WORDS = 'the of and to in is we so let then thus therefore compute solve equation value sum product factor prime square root angle triangle area'.split(' ');

async function generate(dir) {
  const r = rng(42);
  let written = 0;
  for (let step = 1; written < rollouts; step++) {
    const out = createWriteStream(join(dir, `step-${String(step).padStart(5, '0')}.jsonl`));
    for (let q = 0; q < 64 && written < rollouts; q++) {
      const ros = [];
      const truth = q % 4;
      for (let i = 0; i < 64; i++) {
        let text = '';
        while (text.length < bytes * (0.9 + 0.2 * r())) text += WORDS[Math.floor(r() * WORDS.length)] + (r() < 0.1 ? '.\n' : ' ');
        const ans = r() < 0.6 ? truth : Math.floor(r() * 4);
        ros.push({ response: `${text} so the answer is \\boxed{${ans}}`, mean_logprob: -r(), reward: ans === truth ? 1 : 0 });
      }
      if (!out.write(`${JSON.stringify({ kind: 'group', step, question_id: `math/${q}`, ground_truth: String(truth), rollouts: ros })}\n`)) await once(out, 'drain');
      written += 64;
    }
    out.end();
    await once(out, 'finish');
  }
}

function run(cli, argv, cache) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, cli, ...argv], { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, CONSENSUS_LENS_CACHE_DIR: cache } });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`${cli} ${argv.join(' ')} failed: ${r.stderr}`);
  const m = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
  return { wall, cpu: m ? Number(m[1]) + Number(m[2]) : Number.NaN };
}

const root = mkdtempSync(join(tmpdir(), 'cl-read-path-'));
try {
  const dir = join(root, 'run');
  await import('node:fs').then((fs) => fs.mkdirSync(dir));
  await generate(dir);
  const modes = ['no cache', 'building the cache', 'from the cache'];
  const best = { ours: modes.map(() => ({ wall: Infinity, cpu: Infinity })), base: modes.map(() => ({ wall: Infinity, cpu: Infinity })) };
  const keep = (slot, t) => {
    if (t.wall < slot.wall) slot.wall = t.wall;
    if (t.cpu < slot.cpu) slot.cpu = t.cpu;
  };
  const score = ['score', dir, '--operators', 'majority'];
  for (let k = 0; k < rounds; k++) {
    for (const [who, cli] of k % 2 ? [['base', theirs], ['ours', ours]] : [['ours', ours], ['base', theirs]]) {
      const cache = mkdtempSync(join(root, 'cache-'));
      keep(best[who][0], run(cli, [...score, '--no-cache'], cache));
      keep(best[who][1], run(cli, score, cache));
      keep(best[who][2], run(cli, score, cache));
      rmSync(cache, { recursive: true, force: true });
    }
  }
  const f = (t) => `${t.wall.toFixed(2)} s (${t.cpu.toFixed(2)} CPU s)`;
  console.log(`${rollouts.toLocaleString('en')} roll-outs, load average ${loadavg()[0].toFixed(1)}, best of ${rounds}\n`);
  console.log('| read path | ours | baseline | ratio wall (CPU) |\n|---|---|---|---|');
  modes.forEach((m, i) => {
    const o = best.ours[i];
    const b = best.base[i];
    console.log(`| \`score --operators majority\`, ${m} | ${f(o)} | ${f(b)} | ${(o.wall / b.wall).toFixed(2)} (${(o.cpu / b.cpu).toFixed(2)}) |`);
  });
  console.log(JSON.stringify({ rollouts, rounds, load: loadavg()[0], modes, ours: best.ours, base: best.base }));
} finally {
  rmSync(root, { recursive: true, force: true });
}
