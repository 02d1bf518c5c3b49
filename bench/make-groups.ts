// Benchmark input: native group records of N roll-outs with ~BYTES of realistic reasoning text
// each (synth's rich mode), a few answer classes, confidences. Seeded.
// Usage: node --import tsx bench/make-groups.ts OUT GROUPS [N=64] [BYTES=2048] [SEED=1]
import { createWriteStream } from 'node:fs';
import { rng, randomPlan, synthRollouts } from '../scripts/synth';

const [out, groupsArg, nArg = '64', bytesArg = '2048', seedArg = '1'] = process.argv.slice(2);
const r = rng(Number(seedArg));
const stream = createWriteStream(out);
const groups = Number(groupsArg);
const n = Number(nArg);
const bytes = Number(bytesArg);
(async () => {
  for (let q = 0; q < groups; q++) {
    const rollouts = synthRollouts(r, randomPlan(r, n), { bytes, rich: true });
    const line = JSON.stringify({ kind: 'group', step: Math.floor(q / 32), question_id: `bench/${q}`, rollouts });
    if (!stream.write(line + '\n')) await new Promise<void>((resolve) => stream.once('drain', () => resolve()));
  }
  stream.end();
})();
