// Benchmark input: native group records of N roll-outs with ~BYTES of realistic reasoning text
// each (synth's rich mode), a few answer classes, confidences. Seeded.
// Usage: node --import tsx bench/make-groups.ts OUT GROUPS [N=64] [BYTES=2048] [SEED=1]
// BYTES may be `lognormal:MEDIAN:CAP` (e.g. lognormal:12288:40960): each roll-out's length drawn
// from a lognormal with that median (σ = 0.6 in log space), capped, as reasoning models write.
import { createWriteStream } from 'node:fs';
import { rng, randomPlan, synthRollouts } from '../scripts/synth';

const [out, groupsArg, nArg = '64', bytesArg = '2048', seedArg = '1'] = process.argv.slice(2);
const r = rng(Number(seedArg));
const stream = createWriteStream(out);
const groups = Number(groupsArg);
const n = Number(nArg);
const logn = /^lognormal:(\d+):(\d+)$/.exec(bytesArg);
const bytes = logn ? Number(logn[1]) : Number(bytesArg);
let lengths: (() => number) | undefined;
if (logn) {
  const median = Number(logn[1]);
  const cap = Number(logn[2]);
  const lr = rng(Number(seedArg) + 1000003);
  // Box–Muller from a separate seeded stream, so the texts' own draws stay those of the seed.
  lengths = () => {
    const z = Math.sqrt(-2 * Math.log(1 - lr())) * Math.cos(2 * Math.PI * lr());
    return Math.min(cap, Math.round(median * Math.exp(0.6 * z)));
  };
}
(async () => {
  for (let q = 0; q < groups; q++) {
    const rollouts = synthRollouts(r, randomPlan(r, n), { bytes, rich: true, lengths });
    const line = JSON.stringify({ kind: 'group', step: Math.floor(q / 32), question_id: `bench/${q}`, rollouts });
    if (!stream.write(line + '\n')) await new Promise<void>((resolve) => stream.once('drain', () => resolve()));
  }
  stream.end();
})();
