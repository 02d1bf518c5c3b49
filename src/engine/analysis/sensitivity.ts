// Sensitivity of a question's CoRE pseudo-label to κ and τ: the interval around
// the current value over which the label (its answer class) stays the same.
//
// The label is a function of the replicator dynamics' end point, which is PIECEWISE CONSTANT in κ
// and τ, but not monotone: the dynamics can cross between basins more than once along a
// parameter (and the T_max / ε stopping rule adds its own steps). So there is no closed form:
//   1. bracket — walk outwards from the current value on a grid (κ: linear steps of `step`;
//      τ: geometric steps of factor `factor`, τ > 0) until the label changes or the range ends;
//   2. bisect — between the last grid point with the same label and the first with another
//      label, bisect to `tol` (≈1e-4), keeping the invariant "inside: same, outside: different".
// The interval is maximal among grid-connected ones: a flip that starts and ends between two
// grid points is not seen (the tests check the result against brute-force re-scoring on a grid
// four times finer). Each evaluation is one CoRE run on the cached features (no TF-IDF).
// Pure: no 'vscode'.

import type { PreparedGroup } from '../prepare';
import { resolveParams, type Params } from '../params';
import { equilibrium } from '../operators/equilibrium';

export type SensitiveParam = 'kappa' | 'tau';

export interface SensitivityOptions {
  /** κ grid step (default 0.02). */
  step?: number;
  /** τ grid factor (default 1.1). */
  factor?: number;
  /** Bisection tolerance (default 1e-4; for τ relative to max(1, τ)). */
  tol?: number;
  /** Search range (κ: [0, 1]; τ: [1e-3, 100]). */
  min?: number;
  max?: number;
}

export interface SensitivityInterval {
  param: SensitiveParam;
  value: number;
  /** The CoRE label class at `value` (-1: none) and its answer. */
  labelClass: number;
  label: string | null;
  /** Largest interval [lo, hi] around value with the same label (to ±tol). */
  lo: number;
  hi: number;
  /** Whether lo/hi are the ends of the search range (no flip found on that side). */
  loIsRangeEnd: boolean;
  hiIsRangeEnd: boolean;
  /** The label just beyond each end (undefined at a range end). */
  belowClass?: number;
  belowLabel?: string | null;
  aboveClass?: number;
  aboveLabel?: string | null;
  /** Distance to the nearest flip (Infinity when none in the range). */
  distance: number;
  /** False when the parameter cannot move the label (τ without logged confidence). */
  affects: boolean;
  evaluations: number;
}

/** CoRE's label class on `g` with `param` set to `value` (the other parameters from `p`). */
export function coreLabelAt(g: PreparedGroup, p: Params, param: SensitiveParam, value: number): number {
  return equilibrium('core', g, { ...p, [param]: value }).labelClass;
}

export function sensitivityInterval(g: PreparedGroup, params: Partial<Params> | Params, param: SensitiveParam, opts: SensitivityOptions = {}): SensitivityInterval {
  const p = resolveParams(params as Partial<Params>);
  const value = p[param];
  const tol = opts.tol ?? 1e-4;
  const min = opts.min ?? (param === 'kappa' ? 0 : 1e-3);
  const max = opts.max ?? (param === 'kappa' ? 1 : 100);
  let evaluations = 0;
  const at = (v: number): number => {
    evaluations++;
    return coreLabelAt(g, p, param, v);
  };
  const label0 = at(value);
  const base = {
    param,
    value,
    labelClass: label0,
    label: label0 >= 0 ? g.classes[label0].answer : null,
  };
  const affects = param === 'kappa' ? g.classes.some((c) => c.members.length > 1) : g.confidenceMissing === 0 && g.n > 0;
  if (!affects || !g.hasReasoning) {
    return { ...base, lo: min, hi: max, loIsRangeEnd: true, hiIsRangeEnd: true, distance: Infinity, affects: false, evaluations };
  }
  const tolAt = (v: number): number => (param === 'tau' ? tol * Math.max(1, v) : tol);
  const next = (v: number, dir: 1 | -1): number => {
    if (param === 'kappa') return v + dir * (opts.step ?? 0.02);
    const f = opts.factor ?? 1.1;
    return dir > 0 ? v * f : v / f;
  };

  const side = (dir: 1 | -1): { end: number; isRangeEnd: boolean; beyond?: number } => {
    const limit = dir > 0 ? max : min;
    if (dir > 0 ? value >= max : value <= min) return { end: value, isRangeEnd: true };
    let inside = value;
    for (;;) {
      let probe = next(inside, dir);
      const past = dir > 0 ? probe >= limit : probe <= limit;
      if (past) probe = limit;
      const l = at(probe);
      if (l !== label0) {
        // Bisect (inside, probe): inside keeps the label, probe does not.
        let a = inside;
        let b = probe;
        let lb = l;
        while (Math.abs(b - a) > tolAt(Math.min(a, b))) {
          const mid = param === 'tau' ? Math.sqrt(a * b) : (a + b) / 2;
          const lm = at(mid);
          if (lm === label0) a = mid;
          else {
            b = mid;
            lb = lm;
          }
        }
        return { end: a, isRangeEnd: false, beyond: lb };
      }
      if (past) return { end: limit, isRangeEnd: true };
      inside = probe;
    }
  };
  const lo = side(-1);
  const hi = side(1);
  const name = (k: number | undefined): string | null | undefined => (k === undefined ? undefined : k >= 0 ? g.classes[k].answer : null);
  const out: SensitivityInterval = {
    ...base,
    lo: lo.end,
    hi: hi.end,
    loIsRangeEnd: lo.isRangeEnd,
    hiIsRangeEnd: hi.isRangeEnd,
    distance: Math.min(lo.isRangeEnd ? Infinity : value - lo.end, hi.isRangeEnd ? Infinity : hi.end - value),
    affects: true,
    evaluations,
  };
  if (lo.beyond !== undefined) {
    out.belowClass = lo.beyond;
    out.belowLabel = name(lo.beyond);
  }
  if (hi.beyond !== undefined) {
    out.aboveClass = hi.beyond;
    out.aboveLabel = name(hi.beyond);
  }
  return out;
}

/** Both intervals (κ and τ) of a question at the given parameters. */
export function sensitivity(g: PreparedGroup, params: Partial<Params>, opts: { kappa?: SensitivityOptions; tau?: SensitivityOptions } = {}): { kappa: SensitivityInterval; tau: SensitivityInterval } {
  return { kappa: sensitivityInterval(g, params, 'kappa', opts.kappa), tau: sensitivityInterval(g, params, 'tau', opts.tau) };
}
