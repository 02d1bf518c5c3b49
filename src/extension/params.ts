// Operator parameters shown as sliders and settings (SPEC §4): ids, defaults, ranges. Pure: no
// 'vscode'. The settings keys are `consensusLens.params.<key>` (see package.json).
import type { ParamSpec } from '../protocol/messages';
import { DEFAULT_PARAMS, OPERATOR_LABELS, PARAM_SPECS, operatorsUsing } from '../engine';

/** The panel's sliders: the parameters of PARAM_SPECS that have one, for the operators they change. */
export const SLIDER_PARAMS: ParamSpec[] = PARAM_SPECS.flatMap((p) =>
  p.slider ? [{ key: p.id, label: p.symbol, min: p.slider.min, max: p.slider.max, step: p.slider.step, default: DEFAULT_PARAMS[p.id] as number, operators: operatorsUsing(p.id), description: p.slider.description }] : [],
);

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

export { OPERATOR_LABELS };
