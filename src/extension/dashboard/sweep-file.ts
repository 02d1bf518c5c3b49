// The result file of a cluster sweep (`python -m consensus_lens.ray sweep … --output FILE`,
// docs/scale.md#seeing-the-result): a header line naming the run, then one line of counts and
// sums per setting and operator. Read here into the dashboard's κ × τ heatmap, the same cells its
// own 6 × 6 sweep fills (the counts and sums, never ratios).
import { DEFAULT_PARAMS } from '../../engine';
import { SWEEP_OPERATORS as HEATMAP_OPERATORS, type DashSweep } from '../../protocol/dashboard-messages';

export interface SweepFile {
  /** The run the driver swept (an absolute path on the cluster's shared storage). */
  run: string;
  sweep: Omit<DashSweep, 'runId'>;
}

const COUNTS = ['groups', 'flips_vs_majority', 'gate_sum', 'with_truth', 'correct'] as const;

/** Parses a cluster sweep result; an error names the file and line. */
export function parseSweepFile(text: string, file: string): SweepFile {
  const lines = text.split('\n');
  const parse = (k: number): Record<string, unknown> => {
    try {
      const v = JSON.parse(lines[k]) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      // reported below
    }
    throw new Error(`${file}:${k + 1}: not a JSON object`);
  };
  const header = parse(0);
  if (header.consensus_lens_sweep !== 1 || typeof header.run !== 'string') throw new Error(`${file}:1: not a cluster sweep result (python -m consensus_lens.ray sweep … --output FILE writes one)`);
  const rows: { line: number; operator: string; params: Record<string, unknown>; counts: number[] }[] = [];
  for (let k = 1; k < lines.length; k++) {
    if (!lines[k].trim()) continue;
    const o = parse(k);
    const counts = COUNTS.map((c) => o[c]);
    if (typeof o.operator !== 'string' || !o.params || typeof o.params !== 'object' || !counts.every((c) => typeof c === 'number' && Number.isFinite(c) && c >= 0)) {
      throw new Error(`${file}:${k + 1}: expected params, operator and ${COUNTS.join(', ')}`);
    }
    rows.push({ line: k + 1, operator: o.operator, params: o.params as Record<string, unknown>, counts: counts as number[] });
  }
  const operator = HEATMAP_OPERATORS.find((op) => rows.some((r) => r.operator === op));
  if (!operator) throw new Error(`${file}: no CoRE, EC or CISC sweep in it (the heatmap shows one of them)`);
  const mine = rows.filter((r) => r.operator === operator);
  const other = new Map<string, Set<string>>();
  const cells: DashSweep['cells'] = mine.map((r) => {
    for (const key of Object.keys(r.params)) if (key !== 'kappa' && key !== 'tau') other.set(key, (other.get(key) ?? new Set()).add(JSON.stringify(r.params[key])));
    const kappa = r.params.kappa ?? DEFAULT_PARAMS.kappa;
    const tau = r.params.tau ?? DEFAULT_PARAMS.tau;
    if (typeof kappa !== 'number' || typeof tau !== 'number') throw new Error(`${file}:${r.line}: kappa and tau must be numbers`);
    const [groups, flips, gateSum, withTruth, correct] = r.counts;
    return { kappa, tau, groups, flips, gateSum, withTruth, correct };
  });
  const kappas = [...new Set(cells.map((c) => c.kappa))].sort((a, b) => a - b);
  const taus = [...new Set(cells.map((c) => c.tau))].sort((a, b) => a - b);
  const varied = [...other].filter(([key, values]) => values.size > 1 || mine.some((r) => !(key in r.params))).map(([key]) => key);
  if (varied.length) throw new Error(`${file}: it also varies ${varied.join(', ')}; the heatmap shows κ × τ only`);
  // The heatmap is a κ × τ grid: one cell per pair, nothing else varied.
  if (cells.length !== kappas.length * taus.length || new Set(cells.map((c) => `${c.kappa}/${c.tau}`)).size !== cells.length) {
    throw new Error(`${file}: the ${operator} settings are not a κ × τ grid (${cells.length} settings, ${kappas.length} κ × ${taus.length} τ)`);
  }
  return { run: header.run, sweep: { operator, kappas, taus, cells, ms: typeof header.ms === 'number' ? header.ms : 0 } };
}
