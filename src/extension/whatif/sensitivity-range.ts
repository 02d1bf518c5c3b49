// The panel's wire form of a sensitivity interval. Pure: no 'vscode'.
import type { SensitivityInterval } from '../../engine';
import type { SensitivityRange } from '../../protocol/messages';

/** The panel's wire form of an interval (Infinity → null). */
export function sensitivityRange(r: SensitivityInterval): SensitivityRange {
  const out: SensitivityRange = { param: r.param, value: r.value, label: r.label, lo: r.lo, hi: r.hi, loIsRangeEnd: r.loIsRangeEnd, hiIsRangeEnd: r.hiIsRangeEnd, distance: Number.isFinite(r.distance) ? r.distance : null, affects: r.affects };
  if (r.belowLabel !== undefined) out.belowLabel = r.belowLabel;
  if (r.aboveLabel !== undefined) out.aboveLabel = r.aboveLabel;
  return out;
}
