// The y-axis of the recovery-region plot (CoRE Fig. 4: outnumbering ratio r = m/n* against the
// coherence advantage c*/c_w, log scale) and where each bar is drawn on it. Pure: no DOM.
//
// The axis fits every value drawn — the points, the vote's bars (m−1)/(n*−1) ≥ 1 and the
// confidence-lowered bars (w̄_w/w̄_*)·(m−1)/(n*−1), which fall below 1 whenever the runner-up is
// the more confident class (that is exactly why such a question can be overturned, so the bar
// must show). Only values outside [FLOOR, CEILING] (or ≤ 0, which a log axis cannot show) are
// clipped: drawn at the edge as an arrow pointing out of the plot; the tooltip keeps the value.
export const FLOOR = 1e-3;
export const CEILING = 1e4;

export interface RecoveryAxis {
  min: number;
  max: number;
}

/** A log axis holding every finite positive value in [FLOOR, CEILING], with some margin. */
export function recoveryAxis(values: number[]): RecoveryAxis {
  const ys = values.filter((v) => Number.isFinite(v) && v > 0).map((v) => Math.min(CEILING, Math.max(FLOOR, v)));
  const lo = Math.min(0.5, ...ys);
  const hi = Math.max(2, ...ys);
  return { min: Math.max(FLOOR, lo / 1.3), max: Math.min(CEILING, hi * 1.3) };
}

/** Where a bar is drawn: its value, or the axis edge with the direction it was clipped in. */
export function placeBar(v: number, axis: RecoveryAxis): { y: number; clipped: 'below' | 'above' | null } {
  if (!(v > 0) || v < axis.min) return { y: axis.min, clipped: 'below' };
  if (v > axis.max) return { y: axis.max, clipped: 'above' };
  return { y: v, clipped: null };
}
