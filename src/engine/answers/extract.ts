// Answer extraction from a model response (SPEC §3.1).
// Priority: last \boxed / \fbox (an unclosed last box means a truncated generation: no answer),
// then "final answer is X" / "Final Answer: X", then "answer is X" / "answer: X", then a bare
// multiple-choice letter response, then (opts.lastNumber, default true) the last number.

export interface ExtractOptions {
  /** Fall back to the last number in the text (SPEC §3.1: configurable, on by default). */
  lastNumber?: boolean;
}

/** End of the last `cmd` not followed by a letter (`\\boxed` but not `\\boxedx`), or -1. Searched
 * from the end: a response is long and its box is near the end. A command the text lacks is ruled
 * out by a forward search first, which V8 does much faster than a backward one. */
function lastCommandEnd(text: string, cmd: string): number {
  if (text.indexOf(cmd) < 0) return -1;
  for (let i = text.lastIndexOf(cmd); i >= 0; i = i > 0 ? text.lastIndexOf(cmd, i - 1) : -1) {
    const next = text.charCodeAt(i + cmd.length);
    const letter = (next >= 65 && next <= 90) || (next >= 97 && next <= 122);
    if (!letter) return i + cmd.length;
  }
  return -1;
}

/** Result of reading one box: its content, or `unclosed` when braces never balance. */
type BoxRead = { kind: 'ok'; content: string } | { kind: 'unclosed' };

/** Reads the box whose command ends at `pos` (just after `\boxed` / `\fbox`). */
function readBox(text: string, pos: number): BoxRead {
  let i = pos;
  while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++;
  if (text[i] === '{') return readBraced(text, i);
  if (i === pos && text[i] !== '\\') {
    // `\boxed5`: glued digits are the argument; glued letters are another word (`\boxedx`).
    const m = /^-?\d+(?:\.\d+)?/.exec(text.slice(i, i + 100));
    return m ? { kind: 'ok', content: m[0] } : { kind: 'unclosed' };
  }
  // `\boxed 5`, `\boxed\pi`: no braces, the argument runs to the next whitespace or `$`.
  let j = i;
  while (j < text.length && !/[\s$]/.test(text[j]!)) j++;
  if (j === i) return { kind: 'unclosed' };
  return { kind: 'ok', content: text.slice(i, j) };
}

/** Balanced-brace read from text[open] === '{'; escaped braces `\{` `\}` are counted as text. */
function readBraced(text: string, open: number): BoxRead {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') {
      i++; // skip the escaped character (\{, \}, \\)
      continue;
    }
    if (c === '{') depth++;
    else if (c === '}') {
      depth--;
      if (depth === 0) return { kind: 'ok', content: text.slice(open + 1, i) };
    }
  }
  return { kind: 'unclosed' };
}

/** The last box's content; `undefined` when there is no box, `null` when the last is unclosed. */
export function lastBox(text: string): string | null | undefined {
  const last = Math.max(lastCommandEnd(text, '\\boxed'), lastCommandEnd(text, '\\fbox'));
  if (last < 0) return undefined;
  const r = readBox(text, last);
  return r.kind === 'ok' ? r.content.trim() : null;
}

/** The math span a stated answer opens with (`$3$. I hope it is correct.` -> `3`), if any. */
function leadingMath(t: string): string | null {
  const m = /^(\$\$?|\\\(|\\\[)/.exec(t);
  if (!m) return null;
  const close = m[1] === '\\(' ? '\\)' : m[1] === '\\[' ? '\\]' : m[1]!;
  const end = t.indexOf(close, m[1]!.length);
  return end < 0 ? null : t.slice(m[1]!.length, end);
}

/** Strips the decoration models put around a stated answer: markdown bold, `$`, a final period. */
export function cleanStated(s: string): string {
  let t = s.trim();
  // Stop at the end of the line: what follows is usually more prose.
  const nl = t.indexOf('\n');
  if (nl >= 0) t = t.slice(0, nl).trim();
  t = t.replace(/^(?:\*\*|__)\s*/, '');
  const math = leadingMath(t);
  if (math !== null) t = math;
  // Stop at a sentence boundary ("3. I hope it is correct."), never inside a decimal.
  else {
    t = t.split(/\.\s+(?=[A-Z])/)[0]!;
    // "1/2 since 2 > 1", "12, which is even": the reason after the answer is not part of it.
    t = t.split(/\s+(?=(?:since|because|as|which|where|so|when|if|but|for)\s)|,\s+(?=(?!and\b|or\b)[a-z]{2,})/)[0]!;
  }
  for (let k = 0; k < 3; k++) {
    const before = t;
    t = t.replace(/^\*\*|\*\*$/g, '').trim();
    t = t.replace(/^\$+|\$+$/g, '').trim();
    t = t.replace(/^\\\(|\\\)$/g, '').replace(/^\\\[|\\\]$/g, '').trim();
    t = t.replace(/[.。;,!]+$/, '').trim();
    if (t === before) break;
  }
  return t.replace(/\*\*/g, '').trim();
}

const CHOICE_ONLY = /^(?:\(([A-Da-d])\)|\*\*([A-Da-d])\*\*|([A-Da-d])[.)]?)$/;

/** A multiple-choice letter if the whole stated answer is one (`B`, `(B)`, `B.`, `**B**`, `(B) text`). */
function choiceLetter(s: string): string | null {
  const t = s.trim();
  const m = CHOICE_ONLY.exec(t);
  if (m) return (m[1] ?? m[2] ?? m[3])!.toUpperCase();
  // "(D) 4.5 eV" / "D) text" / "B because ...": an option letter followed by its text or a reason.
  const opt = /^\(([A-D])\)\s|^([A-D])[).:,]\s|^([A-D])\s+(?=[a-z])/.exec(t);
  if (opt) return (opt[1] ?? opt[2] ?? opt[3])!;
  return null;
}

/** Number-like tokens, longest forms first: LaTeX fraction, mixed number, a/b, decimal/integer. */
const NUMBER_RE =
  /-?\\[dtc]?frac\s*\{\s*-?\d+\s*\}\s*\{\s*\d+\s*\}|-?\d+\s+\d+\s*\/\s*\d+(?![\d.])|-?\d+(?:\.\d+)?\s*\/\s*\d+(?:\.\d+)?|-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])|-?\d*\.?\d+(?:[eE][-+]?\d+)?(?:\s*\\?%)?/g;

/** The last number in free text (SPEC §3.1 fallback); mixed numbers become `a\frac{b}{c}`. */
export function lastNumber(text: string): string | null {
  const last = lastMatch(text, NUMBER_RE);
  if (last === null) return null;
  const mixed = /^(-?\d+)\s+(\d+)\s*\/\s*(\d+)$/.exec(last);
  if (mixed) {
    const [, w, n, d] = mixed;
    // Only a proper fraction after a whole number reads as a mixed number ("4 4/9").
    if (BigInt(n!) < BigInt(d!)) return `${w}\\frac{${n}}{${d}}`;
    return `${n}/${d}`;
  }
  return last.replace(/\s+/g, '').replace(/(?<!\\)%$/, '\\%');
}

const TAIL = 2048;

/** The last match of `re` (flag g); long texts are searched in their tail first. */
function lastMatch(text: string, re: RegExp): string | null {
  if (text.length > 2 * TAIL) {
    const start = text.length - TAIL;
    let tail: RegExpMatchArray | null = null;
    for (const m of text.slice(start).matchAll(re)) tail = m;
    // A match well inside the window cannot be the cut-off end of a longer, earlier match.
    if (tail && tail.index! > 64) return tail[0];
  }
  let last: string | null = null;
  for (const m of text.matchAll(re)) last = m[0];
  return last;
}

const FINAL_RE = /final\s+answer\s*(?:\*\*|__)?\s*(?:is|:)\s*(?:\*\*|__)?\s*:?/iy;
const ANSWER_RE = /answer\s*(?:\*\*|__)?\s*(?:is|:)\s*(?:\*\*|__)?\s*:?/iy;

/**
 * The text after the last "<word>… is/:" (sticky `re` tried at each occurrence of `word`, from
 * the end): a long response is scanned by `lastIndexOf`, not by a regex over all of it.
 */
function statedAfter(text: string, lower: string, word: string, re: RegExp): string | null {
  for (let i = lower.lastIndexOf(word); i >= 0; i = i > 0 ? lower.lastIndexOf(word, i - 1) : -1) {
    if (i > 0 && /\w/.test(text[i - 1]!)) continue; // a word boundary before it
    re.lastIndex = i;
    const m = re.exec(text);
    if (m) return text.slice(i + m[0].length);
  }
  return null;
}

/** The text stated after the last match of `re` (which must have the `g` flag). */
function afterLast(text: string, re: RegExp): string | null {
  let end = -1;
  for (const m of text.matchAll(re)) end = m.index! + m[0].length;
  return end < 0 ? null : text.slice(end);
}

/** Words of prose; a stated answer with several of them is a sentence, not an answer. */
function isProse(s: string): boolean {
  const stripped = s.replace(/\\[A-Za-z]+/g, ' ').replace(/\$[^$]*\$/g, ' ');
  return (stripped.match(/[A-Za-z]{2,}/g) ?? []).length >= 2;
}

/** Reduces a stated answer ("The largest $n$ is 34") to its answer part. */
function refineStated(raw: string): string | null {
  const box = lastBox(raw);
  if (box !== undefined) return box;
  const t = cleanStated(raw);
  if (t === '') return null;
  const letter = choiceLetter(t.replace(/\\(?:text|textbf|textrm|mathrm|mathbf)\{([^{}]*)\}/g, '$1'));
  if (letter) return letter;
  if (!isProse(t)) return t;
  // A sentence: take what follows its last " is " / "=" and retry, else its last number.
  const tail = afterLast(t, /\s(?:is|are|equals|=)\s/g);
  if (tail !== null) {
    const c = cleanStated(tail);
    const l = choiceLetter(c);
    if (l) return l;
    // A lone word ("... the rest is fine") is prose; fall through to the last number.
    if (c !== '' && !isProse(c) && !/^[A-Za-z]{2,}$/.test(c)) return c;
  }
  return lastNumber(t);
}

/**
 * Extracts the answer of a response (SPEC §3.1). `null`: no extractable answer (including a
 * truncated, unclosed last box); `""`: the empty box `\boxed{}`.
 */
export function extractAnswer(response: string, opts?: ExtractOptions): string | null {
  // Most responses have neither: `includes` scans far faster than a regex replace that finds nothing.
  let text = response.includes('\r') ? response.replace(/\r\n?/g, '\n') : response;
  if (text.includes('\u2212')) text = text.replace(/\u2212/g, '-');
  const box = lastBox(text);
  if (box !== undefined) return box;
  const lower = text.toLowerCase();
  const final = statedAfter(text, lower, 'final', FINAL_RE);
  const stated = final ?? statedAfter(text, lower, 'answer', ANSWER_RE);
  if (stated !== null) {
    const r = refineStated(stated);
    // "So answer is consistent.": a lone word after a bare "answer is" is prose, not an answer.
    if (r !== null && (final !== null || !/^[A-Za-z]{2,}$/.test(r))) return r;
  }
  // A response that is only a choice letter ("**B**", "(B)", "B.").
  const whole = text.length <= 32 && text.trim().length <= 8 ? choiceLetter(cleanStated(text)) : null;
  if (whole) return whole;
  if (opts?.lastNumber === false) return null;
  return lastNumber(text);
}
