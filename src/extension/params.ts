// Operator parameters shown as sliders and settings (SPEC §4): ids, defaults, ranges. Pure: no
// 'vscode'. The settings keys are `consensusLens.params.<key>` (see package.json).
import type { OperatorId, ParamSpec } from '../protocol/messages';
import { DEFAULT_PARAMS, PARAM_SPECS } from '../engine/params';

export const SLIDER_PARAMS: ParamSpec[] = [
  { key: 'kappa', label: 'κ', min: 0, max: 1, step: 0.01, default: 0.1, operators: ['ec', 'core'], description: 'reasoning-kernel floor: A = K_ans·[κ + (1−κ)·K_rsn]' },
  { key: 'tau', label: 'τ', min: 0.01, max: 2, step: 0.01, default: 0.25, operators: ['core', 'cisc'], description: 'confidence temperature: w = exp((c − max c)/τ)' },
  { key: 'alpha', label: 'α', min: 0, max: 1, step: 0.01, default: 0.1, operators: ['ec', 'core'], description: 'self-loop penalty of the payoff W′ = A′ − αI + C·eeᵀ' },
  { key: 'omega', label: 'ω', min: 1, max: 20, step: 0.5, default: 5, operators: ['t3rl'], description: 'weight of a verified roll-out: w = 1 + (ω−1)·v' },
  { key: 'lambda', label: 'λ', min: 0, max: 1, step: 0.01, default: 0.9, operators: ['msttrl'], description: 'IPS interpolation of a Correct outcome: R = (1/f)^(1−λ)' },
];

/** Every numeric parameter with its default and allowed range: the engine's one table (SPEC §4–5). */
export interface NumericParam { key: string; default: number | null; min: number; max: number; integer?: boolean; minExclusive?: boolean }
export const ALL_PARAMS: NumericParam[] = PARAM_SPECS.map((p) => ({
  key: p.id,
  default: DEFAULT_PARAMS[p.id] as number | null,
  min: p.min,
  max: p.max,
  integer: p.integer,
  minExclusive: p.minExclusive,
}));

export function defaultParams(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of ALL_PARAMS) if (p.default !== null) out[p.key] = p.default;
  return out;
}

/**
 * Merges user values over defaults, dropping unknown keys and non-finite values and clamping to
 * each parameter's range. `null` values (e.g. shift = null → C = α) are left out.
 */
export function sanitizeParams(values: Record<string, unknown>, base: Record<string, number> = defaultParams()): Record<string, number> {
  const out: Record<string, number> = { ...base };
  for (const p of ALL_PARAMS) {
    const v = values[p.key];
    if (typeof v !== 'number' || !Number.isFinite(v)) continue;
    // An exclusive lower bound (τ > 0) clamps to a small positive value.
    const low = p.minExclusive ? (p.min === 0 ? 1e-6 : p.min + 1e-9) : p.min;
    let x = Math.min(p.max, Math.max(low, v));
    if (p.integer) x = Math.round(x);
    out[p.key] = x;
  }
  return out;
}

/** Parameters that differ from the defaults (for labels such as "κ=0.5"). */
export function changedParams(params: Record<string, number>): Record<string, number> {
  const d = defaultParams();
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(params)) if (d[k] === undefined || Math.abs(d[k] - v) > 1e-12) out[k] = v;
  return out;
}

export const OPERATOR_LABELS: Record<OperatorId, string> = {
  majority: 'Majority',
  cisc: 'CISC',
  ec: 'EC',
  core: 'CoRE',
  t3rl: 'T3RL',
  msttrl: 'MS-TTRL',
};
