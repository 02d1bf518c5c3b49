// In-process cost of scoring one group with CoRE from raw text (features + dynamics), the
// denominator of the answer-class budget. Prints {"core_ms_per_group":..}.
// Usage: node --import tsx bench/core-per-group.ts GROUPS.jsonl
import { readFileSync } from 'node:fs';
import { prepareGroup, scoreGroup, type Group } from '../src/engine';

const groups: Group[] = readFileSync(process.argv[2], 'utf8')
  .trim()
  .split('\n')
  .slice(0, 100)
  .map((l) => {
    const g = JSON.parse(l);
    return { step: g.step, questionId: g.question_id, rollouts: g.rollouts.map((r: { response: string; mean_logprob?: number }) => ({ response: r.response, meanLogprob: r.mean_logprob })) };
  });
let best = Infinity;
for (let k = 0; k < 5; k++) {
  const t = performance.now();
  for (const g of groups) scoreGroup(prepareGroup(g), { operators: ['core'] });
  best = Math.min(best, (performance.now() - t) / groups.length);
}
console.log(JSON.stringify({ core_ms_per_group: best }));
