// "kappa=0.5 tau=0.1" → { kappa: 0.5, tau: 0.1 } (the re-score command's input). Pure.
import { ALL_PARAMS } from './params';

export function parseParamText(text: string): Record<string, number> | null {
  const out: Record<string, number> = {};
  const t = text.trim();
  if (!t) return out;
  for (const part of t.split(/[\s,;]+/)) {
    const m = /^([A-Za-z_-]+)\s*[=:]\s*(-?[0-9.eE+-]+)$/.exec(part);
    if (!m) return null;
    const key = m[1].replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()).replace(/^κ$/, 'kappa');
    const v = Number(m[2]);
    if (!Number.isFinite(v) || !ALL_PARAMS.some((p) => p.key === key)) return null;
    out[key] = v;
  }
  return out;
}
