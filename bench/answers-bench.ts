// Answer-class formation cost per 64-roll-out group (SPEC §3.2), cold (first sight of every
// string: parse + compare) and warm (cache hits). Prints one JSON line:
//   {"classes_ms_per_group_cold":..,"classes_ms_per_group_warm":..}
// Run: node --import tsx bench/answers-bench.ts [--groups N]
import { formClasses } from '../src/engine/answers/index';
import { clearAnswerCaches } from '../src/engine/answers/classes';
import { rng } from '../scripts/synth';


const int = (r: () => number, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

/** The distinct answers of one question: the consensus in several notations, plus wrong ones. */
function questionAnswers(r: () => number): string[] {
  const p = int(r, 1, 40);
  const q = int(r, 41, 97);
  const k = int(r, 2, 30);
  const kind = int(r, 0, 4);
  switch (kind) {
    case 0: // a fraction in many notations
      return [`\\frac{${p}}{${q}}`, `\\dfrac{${p}}{${q}}`, `${p}/${q}`, `\\frac{${p + 1}}{${q}}`, `${(p / q).toFixed(4)}`];
    case 1: // an integer with units / separators
      return [`${k * 1000 + p}`, `${k},${String(1000 + p).slice(1)}`, `${k * 1000 + p}\\text{ cm}`, `${k * 1000 + p + 1}`, `x=${k * 1000 + p}`];
    case 2: // a surd
      return [`${k}\\sqrt{${p + 1}}`, `\\sqrt{${k * k * (p + 1)}}`, `${k + 1}\\sqrt{${p + 1}}`, `\\frac{${k}\\sqrt{${p + 1}}}{1}`];
    case 3: // an expression in a variable
      return [`x^2+${2 * k}x+${k * k}`, `(x+${k})^2`, `(x+${k + 1})^2`, `${k}x`];
    default: // an interval / set
      return [`(${p},${q})`, `${p}<x<${q}`, `[${p},${q}]`, `\\{${p},${q}\\}`, `${q},${p}`];
  }
}

function makeGroup(r: () => number): (string | null)[] {
  const distinct = questionAnswers(r);
  return Array.from({ length: 64 }, () => {
    const u = r();
    if (u < 0.06) return null; // truncated generations
    if (u < 0.1) return ''; // empty boxed
    // Skewed towards the first (consensus) answers.
    const i = Math.min(distinct.length - 1, Math.floor(-Math.log(1 - r()) * 1.2));
    return distinct[i]!;
  });
}

function main(): void {
  const gi = process.argv.indexOf('--groups');
  const n = gi > 0 ? Number(process.argv[gi + 1]) : 400;
  const r = rng(42);
  const groups = Array.from({ length: n }, () => makeGroup(r));
  // "Cold" means empty caches (every string seen for the first time: parsed and compared), not
  // unoptimised code: the CoRE time it is compared with is measured with warm code too, and a run
  // scores thousands of groups. So the code is warmed on unrelated groups (caches cleared each
  // time), then each of three rounds starts from empty caches; the median round is reported.
  const warmup = rng(7);
  const warmGroups = Array.from({ length: n }, () => makeGroup(warmup));
  for (let k = 0; k < 3; k++) {
    clearAnswerCaches();
    for (const g of warmGroups) formClasses(g);
  }
  let sink = 0;
  const rounds: number[] = [];
  for (let k = 0; k < 3; k++) {
    clearAnswerCaches();
    const t0 = performance.now();
    for (const g of groups) sink += formClasses(g).classes.length;
    rounds.push((performance.now() - t0) / n);
  }
  const cold = rounds.sort((a, b) => a - b)[1];
  const reps = 5;
  const t = performance.now();
  for (let k = 0; k < reps; k++) for (const g of groups) sink += formClasses(g).classes.length;
  const warm = (performance.now() - t) / (n * reps);
  if (sink < 0) console.error(sink);
  process.stdout.write(
    JSON.stringify({ classes_ms_per_group_cold: round(cold), classes_ms_per_group_warm: round(warm) }) + '\n',
  );
}

function round(x: number): number {
  return Number(x.toPrecision(3));
}

main();
