// The flat parameter record the editor's settings, sliders and worker requests carry
// (`{ kappa: 0.1, tau: 0.25, advScaleNone: 1, … }`, numbers only) and the engine's `Params`.
// Here, not in the extension, because the worker threads that score runs read it too and import
// only the engine (ARCHITECTURE.md: layers).
import { DEFAULT_PARAMS, PARAM_SPECS, type Params } from './params';

/** Engine parameters from a flat record (unknown keys dropped). */
export function engineParams(params: Record<string, number>): Partial<Params> {
  const allowed: (keyof Params)[] = ['kappa', 'tau', 'alpha', 'shift', 'eps', 'tmax', 'omega', 'ciscTemp', 'lambda', 'tauLow', 'tauHigh', 'uncheckedPassRate', 'entropyWindow', 'advEps'];
  const out: Partial<Record<keyof Params, number | string>> = {};
  for (const k of allowed) if (typeof params[k] === 'number' && Number.isFinite(params[k])) out[k] = params[k];
  // GRPO scaling travels as a number in the flat record: advScaleNone = 1 is Dr. GRPO (no std).
  if (params.advScaleNone === 1) (out as Partial<Params>).advScale = 'none';
  // C must stay ≥ α (Lemma 1): a shift below α (e.g. after moving the α slider) follows α.
  if (typeof out.shift === 'number' && out.shift < ((out.alpha as number | undefined) ?? 0.1)) delete out.shift;
  return out as Partial<Params>;
}

/** Every numeric parameter's default as a flat record (those without one, e.g. shift = α, left out). */
export function defaultParams(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of PARAM_SPECS) {
    const d = DEFAULT_PARAMS[p.id] as number | null;
    if (d !== null) out[p.id] = d;
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
