// Micro-benchmark of TF-IDF on ASCII groups: the JavaScript path (`countSmallAlphabet` + `finish`)
// against the WebAssembly kernel (src/engine/features/ngrams.wat), both through `tfidfRows`
// (counting, idf and L2 rows), on the same groups, in one process, interleaved (the order
// alternates by round), best of several rounds. Times are CPU time of this process (process.cpuUsage, user + system), which a shared,
// noisy machine disturbs less than the wall clock; wall times are shown beside them.
// Input: .bench/core-200.jsonl (made here when missing: bench/make-groups.ts, 200 groups × 64).
// Usage: node --import tsx bench/ngrams-bench.ts [GROUPS.jsonl] [--rounds 9]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { ngramsWasmAvailable, normaliseForNgrams, setNgramsWasmEnabled, tfidfRows, type TfidfRows } from '../src/engine/features/tfidf';

const args = process.argv.slice(2);
const roundsAt = args.indexOf('--rounds');
const ROUNDS = roundsAt >= 0 ? Number(args[roundsAt + 1]) : 9;
const file = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--rounds') ?? '.bench/core-200.jsonl';
if (!existsSync(file)) {
  mkdirSync('.bench', { recursive: true });
  execFileSync(process.execPath, ['--import', 'tsx', 'bench/make-groups.ts', file, '200'], { stdio: 'inherit' });
}
if (!ngramsWasmAvailable()) throw new Error('no WebAssembly on this thread: nothing to compare');

const groups: string[][] = readFileSync(file, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l).rollouts.map((r: { response?: string }) => r.response ?? ''));
const load0 = loadavg();

/** A copy of the rows (both paths return scratch views, valid until their next call). */
const copy = (r: TfidfRows) => ({
  start: Array.from(r.start.subarray(0, r.n + 1)),
  terms: Array.from(r.terms.subarray(0, r.start[r.n])),
  values: Array.from(r.values.subarray(0, r.start[r.n])),
  df: Array.from(r.df.subarray(0, r.vocabularySize)),
  vocabularySize: r.vocabularySize,
});
function rows(texts: string[], wasm: boolean) {
  setNgramsWasmEnabled(wasm);
  try {
    return copy(tfidfRows(texts));
  } finally {
    setNgramsWasmEnabled(true);
  }
}

// Agreement first (and warm-up): identical rows, term ids, values and df.
let chars = 0;
let grams = 0;
let vocab = 0;
let entries = 0;
let differ = 0;
for (const texts of groups) {
  const js = rows(texts, false);
  const wasm = rows(texts, true);
  if (JSON.stringify(js) !== JSON.stringify(wasm)) differ++;
  for (const t of texts) chars += t.length;
  vocab += js.vocabularySize;
  entries += js.terms.length;
  for (const t of texts) grams += Math.max(0, normaliseForNgrams(t).length - 3);
}

function time(wasm: boolean): { cpu: number; wall: number } {
  setNgramsWasmEnabled(wasm);
  const c = process.cpuUsage();
  const t = performance.now();
  for (const texts of groups) tfidfRows(texts);
  const wall = performance.now() - t;
  const u = process.cpuUsage(c);
  setNgramsWasmEnabled(true);
  return { cpu: (u.user + u.system) / 1000 / groups.length, wall: wall / groups.length };
}
const best = { js: { cpu: Infinity, wall: Infinity }, wasm: { cpu: Infinity, wall: Infinity } };
for (let round = 0; round < ROUNDS; round++) {
  for (const path of round % 2 ? (['wasm', 'js'] as const) : (['js', 'wasm'] as const)) {
    const r = time(path === 'wasm');
    best[path].cpu = Math.min(best[path].cpu, r.cpu);
    best[path].wall = Math.min(best[path].wall, r.wall);
  }
}

const g = groups.length;
const ms = (v: number) => `${v.toFixed(3)} ms`;
console.log(`${g} groups from ${file}; per group: ${(chars / g).toFixed(0)} chars, ${(grams / g).toFixed(0)} 4-grams, vocabulary ${(vocab / g).toFixed(0)}, ${(entries / g).toFixed(0)} (document, term) entries; ${differ === 0 ? 'rows identical on every group' : `ROWS DIFFER on ${differ} groups`}`);
console.log(`tfidfRows per group, best of ${ROUNDS} interleaved rounds (CPU time; wall in brackets):`);
console.log(`  JS    ${ms(best.js.cpu)} (${ms(best.js.wall)})`);
console.log(`  wasm  ${ms(best.wasm.cpu)} (${ms(best.wasm.wall)})   ${(best.js.cpu / best.wasm.cpu).toFixed(2)}× (wall ${(best.js.wall / best.wasm.wall).toFixed(2)}×)`);
console.log(`load average before ${load0.map((l) => l.toFixed(2)).join(' ')}, after ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
if (differ) process.exitCode = 1;
