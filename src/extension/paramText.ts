// The re-score command's input: "kappa=0.5 tau=0.1", optionally with an operator name
// ("core kappa=1"). Pure.
import { OPERATOR_IDS, type OperatorId } from '../protocol/messages';
import { ALL_PARAMS } from './slider-params';

export function parseRescoreText(text: string): { operator: OperatorId | null; params: Record<string, number> } | null {
  const out: Record<string, number> = {};
  let operator: OperatorId | null = null;
  const t = text.trim();
  if (!t) return { operator, params: out };
  for (const part of t.split(/[\s,;]+/)) {
    const op = part.toLowerCase().replace(/[-_]/g, '');
    if ((OPERATOR_IDS as readonly string[]).includes(op)) {
      operator = op as OperatorId;
      continue;
    }
    const m = /^([A-Za-z_-]+)\s*[=:]\s*(-?[0-9.eE+-]+)$/.exec(part);
    if (!m) return null;
    const key = m[1].replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const v = Number(m[2]);
    if (!Number.isFinite(v) || !ALL_PARAMS.some((p) => p.key === key)) return null;
    out[key] = v;
  }
  return { operator, params: out };
}

export function parseParamText(text: string): Record<string, number> | null {
  const r = parseRescoreText(text);
  return r && r.operator === null ? r.params : null;
}
