// Operator parameters shown as sliders and settings (docs/contract.md#operators): ids, defaults, ranges. Pure: no
// 'vscode'. The settings keys are `consensusLens.params.<key>` (see package.json).
import type { ParamSpec } from '../protocol/messages';
import { DEFAULT_PARAMS, OPERATOR_LABELS, PARAM_SPECS, changedParams, defaultParams, operatorsUsing, type NumericParam as ParamId } from '../engine';

/** The sliders' ranges (narrower than the valid ones) and steps; the rest comes from PARAM_SPECS and the registry. */
const SLIDERS: Partial<Record<ParamId, { min: number; max: number; step: number; description: string }>> = {
  kappa: { min: 0, max: 1, step: 0.01, description: 'reasoning-kernel floor: A = K_ans·[κ + (1−κ)·K_rsn]' },
  tau: { min: 0.01, max: 2, step: 0.01, description: 'confidence temperature: w = exp((c − max c)/τ)' },
  alpha: { min: 0, max: 1, step: 0.01, description: 'self-loop penalty of the payoff W′ = A′ − αI + C·eeᵀ' },
  omega: { min: 1, max: 20, step: 0.5, description: 'weight of a verified roll-out: w = 1 + (ω−1)·v' },
  lambda: { min: 0, max: 1, step: 0.01, description: 'IPS interpolation of a Correct outcome: R = (1/f)^(1−λ)' },
};

/** The panel's sliders, in PARAM_SPECS order, each for the operators it changes. */
export const SLIDER_PARAMS: ParamSpec[] = PARAM_SPECS.flatMap((p) => {
  const s = SLIDERS[p.id];
  return s ? [{ key: p.id, label: p.symbol, ...s, default: DEFAULT_PARAMS[p.id] as number, operators: operatorsUsing(p.id) }] : [];
});

/** Every numeric parameter with its default and allowed range: the engine's one table (docs/contract.md#parameters-and-defaults). */
export interface NumericParam {
  key: string;
  default: number | null;
  min: number;
  max: number;
  integer?: boolean;
  minExclusive?: boolean;
}
export const ALL_PARAMS: NumericParam[] = PARAM_SPECS.map((p) => ({
  key: p.id,
  default: DEFAULT_PARAMS[p.id] as number | null,
  min: p.min,
  max: p.max,
  integer: p.integer,
  minExclusive: p.minExclusive,
}));

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

// the flat record's defaults and differences are the engine's (the worker threads read them too)
export { OPERATOR_LABELS, changedParams, defaultParams };
