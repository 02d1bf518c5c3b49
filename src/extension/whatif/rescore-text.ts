// The re-score command's input text: prefill, parse, validate. Pure: no 'vscode'.
import { OPERATOR_IDS, operatorSpec, paramSpec, checkValue, type OperatorId } from '../../engine';
import { errorMessage } from '../../util/errors';
import { parseRescoreText } from '../paramText';

/** The operator's own parameters, shown in the prefilled input ("core kappa=0.1 tau=0.25 alpha=0.1"). */
export function prefillText(operator: OperatorId, params: Record<string, number>): string {
  const spec = operatorSpec(operator);
  const keys = (spec?.params ?? []).filter((k) => k !== 'shift' && k !== 'eps' && k !== 'tmax' && k !== 'ciscTemp' && typeof params[k] === 'number');
  return [operator, ...keys.map((k) => `${k}=${params[k]}`)].join(' ');
}

/**
 * The re-score input: "core kappa=0.5" (baseline: the same operator at the configured parameters)
 * or "core kappa=0.5 vs majority" (baseline: another operator at the configured parameters — what
 * a run trained with that operator would have learned from instead).
 */
export function parseWhatIfText(text: string): { operator: OperatorId | null; baseline: OperatorId | null; params: Record<string, number> } | null {
  const m = /^(.*?)(?:\s+|^)vs\.?\s+([A-Za-z_-]+)\s*$/i.exec(text.trim());
  let baseline: OperatorId | null = null;
  let rest = text;
  if (m) {
    const op = m[2].toLowerCase().replace(/[-_]/g, '');
    if (!(OPERATOR_IDS as readonly string[]).includes(op)) return null;
    baseline = op as OperatorId;
    rest = m[1];
  }
  const parsed = parseRescoreText(rest);
  return parsed ? { ...parsed, baseline } : null;
}

/** Null when the text is valid, else what is wrong (unknown names, values outside their ranges). */
export function validateRescoreText(text: string): string | null {
  const parsed = parseWhatIfText(text);
  if (!parsed) return `Write an operator (${OPERATOR_IDS.join(', ')}) and name=value pairs, e.g. "core kappa=0.5 tau=0.25", optionally "vs majority" for another baseline operator`;
  for (const [k, v] of Object.entries(parsed.params)) {
    const spec = paramSpec(k);
    if (!spec) return `unknown parameter ${k}`;
    try {
      checkValue(spec, v);
    } catch (e) {
      return `${spec.symbol}: ${errorMessage(e)}`;
    }
  }
  return null;
}
