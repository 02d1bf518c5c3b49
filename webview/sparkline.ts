// A roll-out's token log-probs by position as a small SVG line (the consensus panel's roll-out
// rows): built element by element with DOM APIs, never from markup; the only text is numbers.
import type { TokenCurve } from '../src/protocol/messages';

const NS = 'http://www.w3.org/2000/svg';
const W = 96;
const H = 18;

function el<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** The lowest bucket of the curve (its position and mean log-prob), or null when none has a value. */
export function lowestPoint(curve: readonly (number | null)[]): { at: number; logprob: number } | null {
  let at = -1;
  for (let i = 0; i < curve.length; i++) {
    const v = curve[i];
    if (v !== null && (at < 0 || v < (curve[at] as number))) at = i;
  }
  return at < 0 ? null : { at, logprob: curve[at] as number };
}

/**
 * Probability (exp of the bucket's mean log-prob) against position, certain at the top; a gap where
 * a bucket has no log-prob. The title says the token count and the least confident stretch.
 */
export function tokenSparkline(c: TokenCurve): SVGSVGElement {
  const svg = el('svg', { class: 'sparkline', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img', 'data-points': c.curve.length });
  const n = c.curve.length;
  const x = (i: number) => (n <= 1 ? W / 2 : 1 + (i * (W - 2)) / (n - 1));
  const y = (lp: number) => 1 + (1 - Math.exp(lp)) * (H - 2);
  svg.append(el('line', { class: 'sparkline-base', x1: 0, x2: W, y1: H - 1, y2: H - 1 }));
  let run: string[] = [];
  const flush = () => {
    if (run.length === 1) {
      const [px, py] = run[0].split(',');
      svg.append(el('circle', { class: 'sparkline-dot', cx: px, cy: py, r: 1.2 }));
    } else if (run.length > 1) svg.append(el('polyline', { class: 'sparkline-line', points: run.join(' ') }));
    run = [];
  };
  c.curve.forEach((v, i) => {
    if (v === null) flush();
    else run.push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`);
  });
  flush();
  const low = lowestPoint(c.curve);
  if (low) svg.append(el('circle', { class: 'sparkline-low', cx: x(low.at).toFixed(1), cy: y(low.logprob).toFixed(1), r: 1.8 }));
  const title = el('title', {});
  const where = low && n ? `; least confident around token ${Math.round(((low.at + 0.5) / n) * c.tokens)} (p = ${Math.exp(low.logprob).toPrecision(2)})` : '';
  title.textContent = `${c.tokens} tokens, probability by position (${n} buckets)${where}`;
  svg.prepend(title);
  return svg;
}
