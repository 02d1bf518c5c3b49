// Log indexing benchmark: `node --import tsx bench/logs-bench.ts [--size-mb 1024] [--keep]`.
//
// Generates a native consensus-lens/v1 log of group records (64 roll-outs of ~2 KB each, with
// mean_logprob and reward) in a temp folder, then, each in its own child process so that peak RSS
// is the process's own (process.resourceUsage().maxRSS):
//   baseline  a bare readline + JSON.parse loop over the file;
//   index     RunIndex.open(file, { follow: false }) — the streaming indexer (numbers + offsets);
//   fetch     after indexing, 2,000 random roll-outs' texts read back by offset (median, p99).
// The baseline runs first (it also warms the page cache), then the indexer, then the baseline again;
// the ratio uses the faster baseline. Prints one JSON line.
// Targets: index time ≤ 2× baseline, index peak RSS < 400 MB, fetch median < 1 ms.
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { errorStack } from '../src/util/errors';

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

async function generate(file: string, sizeMb: number): Promise<{ groups: number; rollouts: number }> {
  const target = sizeMb * 1024 * 1024;
  const out = createWriteStream(file);
  const r = rng(42);
  let written = 0;
  let groups = 0;
  let step = 0;
  while (written < target) {
    if (groups % 32 === 0) step++;
    const rollouts = [];
    for (let i = 0; i < 64; i++) {
      let text = '';
      while (text.length < 1900 + r() * 200) text += WORDS[Math.floor(r() * WORDS.length)] + (r() < 0.1 ? '.\n' : ' ');
      const ans = Math.floor(r() * 4);
      rollouts.push({ response: `${text} so the answer is \\boxed{${ans}}`, mean_logprob: -r(), reward: ans === 0 ? 1 : 0 });
    }
    const line = JSON.stringify({ kind: 'group', step, question_id: `math/${groups % 32}`, prompt: `Question ${groups % 32}: compute the value.`, ground_truth: '0', rollouts }) + '\n';
    if (!out.write(line)) await once(out, 'drain');
    written += Buffer.byteLength(line);
    groups++;
  }
  out.end();
  await once(out, 'finish');
  return { groups, rollouts: groups * 64 };
}

async function childBaseline(file: string): Promise<void> {
  const t0 = process.hrtime.bigint();
  const rl = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let lines = 0;
  let n = 0;
  for await (const line of rl) {
    const o = JSON.parse(line) as { rollouts?: unknown[] };
    lines++;
    n += o.rollouts?.length ?? 1;
  }
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  process.stdout.write(JSON.stringify({ s, lines, rollouts: n, maxRssMb: process.resourceUsage().maxRSS / 1024 }) + '\n');
}

async function childIndex(file: string): Promise<void> {
  const { RunIndex, rolloutSourceOf } = await import('../src/logs/log-layer.js');
  const t0 = process.hrtime.bigint();
  const notices: string[] = [];
  const idx = await RunIndex.open(file, { follow: false, onNotice: (n) => notices.push(n.message) });
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  const groups = idx.groups();
  let rollouts = 0;
  const rssAfterIndex = process.resourceUsage().maxRSS / 1024;
  for (const g of groups) rollouts += g.n;
  // fetch: random roll-outs of random groups (no two consecutive from the same line)
  const r = rng(7);
  const times: number[] = [];
  let chars = 0;
  for (let k = 0; k < 2000; k++) {
    const g = groups[Math.floor(r() * groups.length)];
    const ro = { source: rolloutSourceOf(g, Math.floor(r() * g.n))! };
    const t = process.hrtime.bigint();
    const text = await idx.readRolloutText(ro.source);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
    chars += text.length;
  }
  times.sort((a, b) => a - b);
  idx.close();
  process.stdout.write(
    JSON.stringify({
      s,
      groups: groups.length,
      rollouts,
      notices: notices.length,
      maxRssMb: rssAfterIndex,
      fetchMedianMs: times[Math.floor(times.length / 2)],
      fetchP99Ms: times[Math.floor(times.length * 0.99)],
      fetchedChars: chars,
    }) + '\n',
  );
}

function child(kind: 'baseline' | 'index', file: string): Record<string, number> {
  const r = spawnSync(process.execPath, ['--import', 'tsx', __filename, '--child', kind, file], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`${kind} child failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

async function main(): Promise<void> {
  const childKind = flag('child');
  if (childKind) {
    const file = args[args.indexOf('--child') + 2];
    if (childKind === 'baseline') await childBaseline(file);
    else await childIndex(file);
    return;
  }
  const sizeMb = Number(flag('size-mb') ?? 1024);
  const dir = mkdtempSync(join(tmpdir(), 'cl-logs-bench-'));
  const file = join(dir, 'run.jsonl');
  try {
    const tg = Date.now();
    const gen = await generate(file, sizeMb);
    const genS = (Date.now() - tg) / 1000;
    const b1 = child('baseline', file);
    const ix = child('index', file);
    const b2 = child('baseline', file);
    const base = Math.min(b1.s, b2.s);
    const out = {
      bench: 'logs-index',
      size_mb: Math.round(statSync(file).size / 1048576),
      groups: gen.groups,
      rollouts: gen.rollouts,
      generate_s: genS,
      baseline_readline_json_s: Number(base.toFixed(3)),
      baseline_peak_rss_mb: Math.round(Math.max(b1.maxRssMb, b2.maxRssMb)),
      index_s: Number(ix.s.toFixed(3)),
      index_vs_baseline: Number((ix.s / base).toFixed(3)),
      index_peak_rss_mb: Math.round(ix.maxRssMb),
      index_groups: ix.groups,
      index_rollouts: ix.rollouts,
      fetch_median_ms: Number(ix.fetchMedianMs.toFixed(4)),
      fetch_p99_ms: Number(ix.fetchP99Ms.toFixed(4)),
      targets: { index_vs_baseline: '<= 2', index_peak_rss_mb: '< 400', fetch_median_ms: '< 1' },
      pass: ix.s / base <= 2 && ix.maxRssMb < 400 && ix.fetchMedianMs < 1 && ix.rollouts === gen.rollouts,
      node: process.version,
      // for bench/run.mjs: [what, ours, baseline, ratio, target, ok]
      rows: [
        [`index a ${Math.round(statSync(file).size / 1048576)} MB native log vs readline + JSON.parse`, `${ix.s.toFixed(2)} s`, `${base.toFixed(2)} s`, `${(ix.s / base).toFixed(2)}×`, '≤ 2×', ix.s / base <= 2],
        ['indexer peak RSS', `${Math.round(ix.maxRssMb)} MB`, `${Math.round(Math.max(b1.maxRssMb, b2.maxRssMb))} MB`, '', '< 400 MB', ix.maxRssMb < 400],
        ["fetch one roll-out's text by offset (median of 2,000)", `${ix.fetchMedianMs.toFixed(3)} ms`, '', `p99 ${ix.fetchP99Ms.toFixed(2)} ms`, '< 1 ms', ix.fetchMedianMs < 1],
      ],
    };
    process.stdout.write(JSON.stringify(out) + '\n');
  } finally {
    if (!args.includes('--keep')) rmSync(dir, { recursive: true, force: true });
    else process.stderr.write(`kept ${file}\n`);
  }
}

main().catch((e) => {
  process.stderr.write(errorStack(e) + '\n');
  process.exit(1);
});
