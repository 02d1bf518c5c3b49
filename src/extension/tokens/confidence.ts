// The model's confidence on its own text (README "Confidence on the text"): where a roll-out's
// record carries per-token log-probs and the tokens' strings, each token is laid onto the text,
// binned by probability for the editor's background decorations, the lowest-confidence spans and
// the answer's own tokens are read out; where only log-probs (no strings), only token ids or
// only a mean is logged, a line says what is missing and how to log it, with a per-position
// sparkline when there are per-token values. Pure: no 'vscode' (the benchmark and tests use it).
//
// Bounded: one pass over the tokens and one over the text; a record with more than MAX_TOKENS
// tokens is not laid out (said in the header).
import { looksNemo, nemoGenerated, nemoGeneratedIds } from '../../logs/nemo';

/** Natural-log probability thresholds of the decoration bins: p < 0.9, 0.5, 0.2, 0.05. */
export const BIN_THRESHOLDS = [Math.log(0.9), Math.log(0.5), Math.log(0.2), Math.log(0.05)] as const;
export const BIN_LABELS = ['p < 0.9', 'p < 0.5', 'p < 0.2', 'p < 0.05'] as const;
/** Tokens beyond this are not laid out (a 40 KB roll-out has ~16 K). */
export const MAX_TOKENS = 262_144;
/** How far ahead of the cursor a token's text is looked for (a token the decoder dropped or changed). */
const LOOKAHEAD = 32;

export type TokenData =
  | { kind: 'tokens'; tokens: string[]; logprobs: (number | null)[]; field: string }
  /** Per-token log-probs without the tokens' text (native token_logprobs, verl rollout_log_probs, NeMo RL generation_logprobs). */
  | { kind: 'logprobs'; logprobs: (number | null)[]; field: string; ids: boolean }
  | { kind: 'mean'; mean: number }
  | { kind: 'none' };

const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);

/**
 * What a roll-out's record (native roll-out item, verl dump line, NeMo RL line) holds. `decode`:
 * each token id's text (a tokenizer file, ./tokenizer.ts), for logs that hold ids, not strings.
 */
export function tokenDataOf(o: Record<string, unknown>, decode?: (ids: readonly number[]) => string[]): TokenData {
  if (looksNemo(o)) {
    // NeMo RL: per position over prompt and response (a micro-batch of one: [[...]]); the
    // generated positions are the mask's, else the reader's rule (src/logs/nemo.ts).
    const g = nemoGenerated(o);
    if (g?.logprobs.length) {
      const ids = nemoGeneratedIds(o, g.positions);
      if (ids && decode) return { kind: 'tokens', tokens: decode(ids), logprobs: g.logprobs, field: 'generation_logprobs' };
      return { kind: 'logprobs', logprobs: g.logprobs, field: 'generation_logprobs', ids: ids !== null };
    }
  }
  for (const field of ['token_logprobs', 'rollout_log_probs', 'generation_logprobs']) {
    const lp = o[field];
    if (!Array.isArray(lp) || !lp.length) continue;
    let logprobs = lp.map(num);
    const tokens = o.tokens;
    if (Array.isArray(tokens) && tokens.length === lp.length && tokens.every((t) => typeof t === 'string')) return { kind: 'tokens', tokens: tokens as string[], logprobs, field };
    // NeMo RL logs the prompt's positions too; its mask marks the generated tokens.
    const mask = o.token_loss_mask;
    let ids = Array.isArray(o.token_ids) && o.token_ids.length === lp.length ? (o.token_ids as unknown[]) : null;
    if (Array.isArray(mask) && mask.length === lp.length) {
      logprobs = logprobs.filter((_, i) => mask[i] === 1);
      ids = ids?.filter((_, i) => mask[i] === 1) ?? null;
    }
    if (ids && decode && ids.every((x) => typeof x === 'number' && Number.isInteger(x))) return { kind: 'tokens', tokens: decode(ids as number[]), logprobs, field };
    return { kind: 'logprobs', logprobs, field, ids: Array.isArray(o.token_ids) };
  }
  const m = num(o.mean_logprob);
  return m === null ? { kind: 'none' } : { kind: 'mean', mean: m };
}

export interface TokenLayout {
  /** Per token, [start, end) offsets into the text (start = end: not found in the text). */
  starts: Int32Array;
  ends: Int32Array;
  /** NaN where the log-prob is missing. */
  logprobs: Float64Array;
  aligned: number;
  unaligned: number;
}

/** Byte-level BPE and SentencePiece spellings of a space and a newline, as some samplers return them. */
function plain(t: string): string {
  return t.replace(/[\u0120\u2581]/g, ' ').replace(/\u010a/g, '\n');
}

/**
 * Lays the tokens onto the text in order: each token is expected at the cursor (as written, or
 * with byte-level BPE's Ġ/Ċ or SentencePiece's ▁ read as space/newline), else a little ahead
 * (text the decoder normalised); a token not found takes no text.
 */
export function layoutTokens(text: string, tokens: readonly string[], logprobs: readonly (number | null)[]): TokenLayout {
  const n = Math.min(tokens.length, logprobs.length);
  const starts = new Int32Array(n);
  const ends = new Int32Array(n);
  const lps = new Float64Array(n);
  let cursor = 0;
  let aligned = 0;
  for (let i = 0; i < n; i++) {
    lps[i] = logprobs[i] ?? NaN;
    let t = tokens[i];
    if (t === '') {
      starts[i] = ends[i] = cursor;
      aligned++;
      continue;
    }
    if (!text.startsWith(t, cursor)) {
      const p = plain(t);
      if (text.startsWith(p, cursor)) t = p;
      else {
        const at = text.indexOf(p, cursor);
        if (at >= 0 && at - cursor <= LOOKAHEAD) {
          cursor = at;
          t = p;
        } else {
          starts[i] = ends[i] = cursor;
          continue;
        }
      }
    }
    starts[i] = cursor;
    cursor += t.length;
    ends[i] = cursor;
    aligned++;
  }
  return { starts, ends, logprobs: lps, aligned, unaligned: n - aligned };
}

/** Decoration bin of a log-prob: 0 (p ≥ 0.9, none) to 4 (p < 0.05); missing is 0. */
export function binOf(lp: number): number {
  if (!(lp < BIN_THRESHOLDS[0])) return 0;
  let b = 1;
  while (b < BIN_THRESHOLDS.length && lp < BIN_THRESHOLDS[b]) b++;
  return b;
}

/**
 * Per bin 1–4, the ranges to decorate as [startLine, startChar, endLine, endChar] quadruples in a
 * document where the text starts at line `firstLine`, column 0; adjacent tokens of one bin merge.
 */
export function binRanges(text: string, layout: TokenLayout, firstLine = 0): Int32Array[] {
  const out: number[][] = [[], [], [], []];
  // Offsets only grow, so one cursor over the text's line breaks maps them to positions.
  let line = 0;
  let lineStart = 0;
  let scan = 0;
  const pos = (off: number): [number, number] => {
    while (scan < off) {
      if (text.charCodeAt(scan) === 10) {
        line++;
        lineStart = scan + 1;
      }
      scan++;
    }
    return [firstLine + line, off - lineStart];
  };
  const n = layout.starts.length;
  let i = 0;
  while (i < n) {
    const b = binOf(layout.logprobs[i]);
    if (b === 0 || layout.starts[i] === layout.ends[i]) {
      i++;
      continue;
    }
    const s = layout.starts[i];
    let e = layout.ends[i];
    let j = i + 1;
    while (j < n && layout.starts[j] === e && binOf(layout.logprobs[j]) === b) e = layout.ends[j++];
    const [sl, sc] = pos(s);
    const [el, ec] = pos(e);
    out[b - 1].push(sl, sc, el, ec);
    i = j;
  }
  return out.map((a) => Int32Array.from(a));
}

export interface LowSpan {
  /** Token range [first, last + 1). */
  first: number;
  end: number;
  /** Text offsets. */
  start: number;
  stop: number;
  meanLogprob: number;
}

/** The `k` non-overlapping windows of `window` tokens with the lowest mean log-prob, lowest first (O(k·T)). */
export function lowestSpans(layout: TokenLayout, k = 5, window = 8): LowSpan[] {
  const n = layout.logprobs.length;
  if (!n) return [];
  const w = Math.min(window, n);
  const starts = n - w + 1;
  // Each window's mean over its tokens with a log-prob (NaN: none has one).
  const means = new Float64Array(starts);
  let s = 0;
  let c = 0;
  const lp = layout.logprobs;
  for (let i = 0; i < n; i++) {
    if (Number.isFinite(lp[i])) (s += lp[i]), c++;
    if (i >= w && Number.isFinite(lp[i - w])) (s -= lp[i - w]), c--;
    if (i >= w - 1) means[i - w + 1] = c > 0 ? s / c : NaN;
  }
  const taken: LowSpan[] = [];
  while (taken.length < k) {
    let best = -1;
    for (let i = 0; i < starts; i++) {
      const m = means[i];
      if (Number.isNaN(m) || (best >= 0 && m >= means[best])) continue;
      let free = true;
      for (const t of taken) if (i < t.end && i + w > t.first) free = false;
      if (free) best = i;
    }
    if (best < 0) break;
    taken.push({ first: best, end: best + w, start: layout.starts[best], stop: layout.ends[best + w - 1], meanLogprob: means[best] });
  }
  return taken;
}

export interface AnswerConfidence {
  tokens: number;
  meanLogprob: number;
  minLogprob: number;
  /** exp(Σ log-prob): the probability of the answer's tokens together. */
  jointProb: number;
}

/** The tokens overlapping text offsets [start, end), with log-probs. */
export function spanConfidence(layout: TokenLayout, start: number, end: number): AnswerConfidence | null {
  let k = 0;
  let sum = 0;
  let min = Infinity;
  for (let i = 0; i < layout.starts.length; i++) {
    if (layout.ends[i] <= start || layout.starts[i] >= end || layout.starts[i] === layout.ends[i]) continue;
    const lp = layout.logprobs[i];
    if (!Number.isFinite(lp)) continue;
    k++;
    sum += lp;
    if (lp < min) min = lp;
  }
  return k ? { tokens: k, meanLogprob: sum / k, minLogprob: min, jointProb: Math.exp(sum) } : null;
}

/** The token at text offset `off` (binary search), or -1. */
export function tokenAt(layout: TokenLayout, off: number): number {
  let lo = 0;
  let hi = layout.starts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (layout.ends[mid] <= off) lo = mid + 1;
    else if (layout.starts[mid] > off) hi = mid - 1;
    else return layout.starts[mid] === layout.ends[mid] ? -1 : mid;
  }
  return -1;
}

const BLOCKS = '▁▂▃▄▅▆▇█';

/** Per-position curve: the mean log-prob of `width` equal buckets of positions (null: none in the bucket has one). */
export function positionCurve(logprobs: readonly (number | null)[] | Float64Array, width = 64): (number | null)[] {
  const xs = Array.from(logprobs as ArrayLike<number | null>, (x) => (x === null ? NaN : x));
  const buckets = Math.min(width, xs.length);
  const vals: (number | null)[] = [];
  for (let b = 0; b < buckets; b++) {
    const lo = Math.floor((b * xs.length) / buckets);
    const hi = Math.floor(((b + 1) * xs.length) / buckets);
    let s = 0;
    let c = 0;
    for (let i = lo; i < hi; i++) if (Number.isFinite(xs[i])) (s += xs[i]), c++;
    vals.push(c ? s / c : null);
  }
  return vals;
}

/** The same curve as block characters (low = unsure). */
export function sparkline(logprobs: readonly (number | null)[] | Float64Array, width = 64): string {
  // Scale: probability of the bucket's mean log-prob, so 0 (certain) is the full block.
  return positionCurve(logprobs, width)
    .map((v) => (v !== null ? BLOCKS[Math.max(0, Math.min(7, Math.round(Math.exp(v) * 7)))] : ' '))
    .join('');
}

const f = (x: number, d = 2) => (x < 0 ? '\u2212' : '') + Math.abs(x).toFixed(d);
/**
 * A stretch of roll-out text for one header line, quoted: the text itself (no JSON escaping, so
 * `\boxed{2}` reads as in the roll-out), on one line — a line break shows as ⏎, a tab as a
 * space, any other control character as U+FFFD. The header is a plain-text document (never HTML or
 * Markdown), so nothing else needs escaping.
 */
export function quoted(s: string, max = Infinity): string {
  const t = s.length > max ? s.slice(0, max - 1) + '…' : s;
  return `"${t
    .replace(/\r\n|[\n\r\u0085\u2028\u2029]/g, '⏎')
    .replace(/\t/g, ' ')
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '\ufffd')}"`;
}
const snippet = (s: string) => quoted(s, 48);

/** What the document shows for a roll-out's tokens: its header lines, and the layout to decorate. */
export interface TokenReadout {
  /** Lines for the document header (each starts with "# "). */
  lines: string[];
  layout: TokenLayout | null;
  spans: LowSpan[];
  /** Line index within `lines` of each span's entry (for links). */
  spanLines: number[];
}

export const HOW_TO_LOG = 'log per-token log-probs and the tokens\u2019 text: RunLogger(keep_token_logprobs=True) with "token_logprobs" and "tokens" per roll-out (docs/log-formats.md)';

/**
 * The header lines and layout for one roll-out. `answer`: text offsets of the extracted answer
 * (inside its box), or null.
 */
export function tokenReadout(text: string, data: TokenData, answer: [number, number] | null): TokenReadout {
  const lines: string[] = [];
  if (data.kind === 'none') return { lines: [`# token confidence: not logged — ${HOW_TO_LOG}`], layout: null, spans: [], spanLines: [] };
  if (data.kind === 'mean') return { lines: [`# token confidence: only the mean log-prob (${f(data.mean, 3)}) is logged — ${HOW_TO_LOG}`], layout: null, spans: [], spanLines: [] };
  if (data.kind === 'logprobs') {
    const what = data.ids ? 'token ids and log-probs' : 'log-probs';
    lines.push(`# token confidence: ${data.logprobs.length} tokens' ${what} (${data.field}) but not the tokens' text, so they cannot be laid on it — ${HOW_TO_LOG}`);
    lines.push(`# per-position probability: ${sparkline(data.logprobs)}`);
    return { lines, layout: null, spans: [], spanLines: [] };
  }
  if (data.tokens.length > MAX_TOKENS) return { lines: [`# token confidence: ${data.tokens.length} tokens, more than ${MAX_TOKENS}: not laid out`], layout: null, spans: [], spanLines: [] };
  const layout = layoutTokens(text, data.tokens, data.logprobs);
  let sum = 0;
  let k = 0;
  let low = 0;
  for (const lp of layout.logprobs)
    if (Number.isFinite(lp)) {
      sum += lp;
      k++;
      if (lp < BIN_THRESHOLDS[2]) low++;
    }
  lines.push(
    `# token confidence: ${layout.logprobs.length} tokens, mean log-prob ${k ? f(sum / k, 3) : '-'}, ${low} below p = 0.2` +
      (layout.unaligned ? `; ${layout.unaligned} not found in the text` : '') +
      ' — background: p < 0.9, 0.5, 0.2, 0.05 (Consensus Lens: Toggle Token Confidence)',
  );
  if (answer) {
    const a = spanConfidence(layout, answer[0], answer[1]);
    lines.push(
      a ? `# answer tokens: ${a.tokens}, mean log-prob ${f(a.meanLogprob, 3)}, lowest ${f(a.minLogprob, 3)}, together p = ${a.jointProb.toPrecision(3)}` : '# answer tokens: none with a log-prob',
    );
  }
  const spans = lowestSpans(layout);
  const spanLines: number[] = [];
  if (spans.length) {
    lines.push(`# lowest-confidence spans (${Math.min(8, layout.logprobs.length)} tokens each):`);
    spans.forEach((s, i) => {
      spanLines.push(lines.length);
      lines.push(`#   ${i + 1}. ${snippet(text.slice(s.start, s.stop))}  mean log-prob ${f(s.meanLogprob, 2)}`);
    });
  }
  return { lines, layout, spans, spanLines };
}

/** Points of a roll-out row's curve in the consensus panel. */
export const CURVE_POINTS = 48;

/** A roll-out's per-position curve for the consensus panel (src/protocol/messages.ts TokenCurve). */
export function tokenCurveOf(index: number, data: TokenData): { index: number; kind: TokenData['kind']; tokens: number; curve: (number | null)[] } {
  if (data.kind === 'tokens' || data.kind === 'logprobs') return { index, kind: data.kind, tokens: data.logprobs.length, curve: positionCurve(data.logprobs, CURVE_POINTS) };
  return { index, kind: data.kind, tokens: 0, curve: [] };
}

/**
 * The consensus panel's line about a group's token log-probs: what is shown, what is missing and
 * how to log it. `datas`: the roll-outs read back (null: no record to read).
 */
export function tokenNote(datas: readonly (TokenData | null)[]): string | null {
  const read = datas.filter((d): d is TokenData => d !== null);
  const how = `To see it on the text, ${HOW_TO_LOG}; the TRL and verl integrations do it when the sampler’s log-probs reach them (docs/training-loop.md).`;
  if (!datas.length) return null;
  if (!read.length) return `Token confidence — this log’s rows (a TRL completions table, a W&B table) hold no per-token log-probs. ${how}`;
  const count = (k: TokenData['kind']) => read.filter((d) => d.kind === k).length;
  const [tokens, lps, mean] = [count('tokens'), count('logprobs'), count('mean')];
  const of = (k: number) => (k === read.length ? 'every roll-out' : `${k} of ${read.length} roll-outs`);
  if (tokens === read.length) return 'Per-token log-probs and the tokens’ text are logged: the curve is each roll-out’s probability by position; open a roll-out (Enter) to see it on the text.';
  const parts: string[] = [];
  if (tokens) parts.push(`${of(tokens)}: log-probs and text (open one to see it on the text)`);
  if (lps) {
    const d = read.find((x) => x.kind === 'logprobs') as Extract<TokenData, { kind: 'logprobs' }>;
    parts.push(`${of(lps)}: per-token log-probs (${d.field}${d.ids ? ', with token ids' : ''}) without the tokens’ text — the curve shows them by position, not on the text`);
  }
  if (mean) parts.push(`${of(mean)}: only the mean log-prob — no curve`);
  const none = read.length - tokens - lps - mean;
  if (none) parts.push(`${of(none)}: no log-probs`);
  return `Token confidence — ${parts.join('; ')}. ${how}`;
}
