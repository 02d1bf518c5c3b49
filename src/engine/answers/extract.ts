// Answer extraction from a model response (docs/contract.md#answer-extraction).
// Priority: the boxes of the final statement (\boxed / \fbox; several adjacent boxes are one
// answer; an unclosed last box means a truncated generation: no answer), unless a stated
// "final answer is X" / "answer: X" comes after them; then a stated answer; then a bare
// multiple-choice letter response; then the last math span ($..$, \(..\), \[..\]) unless a
// number follows it; then (opts.lastNumber, default true) the last number.
//
// Every step is linear in the length of the response: model output can be degenerate (an answer
// followed by 100 K spaces, `!!!!…`, `$$$$…`), so no regex with overlapping quantifiers runs on
// unbounded text, and everything but the box search looks only at the last EXTRACT_TAIL characters.

export interface ExtractOptions {
  /** Fall back to the last number in the text (docs/contract.md#answer-extraction: configurable, on by default). */
  lastNumber?: boolean;
}

/** End of the last `cmd` not followed by a letter (`\\boxed` but not `\\boxedx`) that ends before
 * `before`, or -1. `first` is `text.indexOf(cmd)`, found once per text by the caller: a command the
 * text lacks is ruled out by that forward search (V8 searches forward much faster than backward),
 * and no backward search goes below it. Otherwise from the end: a response is long and its box is
 * near the end. */
function lastCommandEnd(text: string, cmd: string, before: number, first: number): number {
  if (first < 0) return -1;
  for (let i = text.lastIndexOf(cmd, before - cmd.length); i >= first; i = i > first ? text.lastIndexOf(cmd, i - 1) : -1) {
    const next = text.charCodeAt(i + cmd.length);
    const letter = (next >= 65 && next <= 90) || (next >= 97 && next <= 122);
    if (!letter) return i + cmd.length;
  }
  return -1;
}

/** Result of reading one box: its content, or `unclosed` when braces never balance. */
type BoxRead = { kind: 'ok'; content: string; end: number } | { kind: 'unclosed' };

/** Reads the box whose command ends at `pos` (just after `\boxed` / `\fbox`). */
function readBox(text: string, pos: number): BoxRead {
  let i = pos;
  while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++;
  if (text[i] === '{') return readBraced(text, i);
  if (i === pos && text[i] !== '\\') {
    // `\boxed5`: glued digits are the argument; glued letters are another word (`\boxedx`).
    const m = /^-?\d+(?:\.\d+)?/.exec(text.slice(i, i + 100));
    return m ? { kind: 'ok', content: m[0], end: i + m[0].length } : { kind: 'unclosed' };
  }
  // `\boxed 5`, `\boxed\pi`: no braces, the argument runs to the next whitespace or `$`.
  let j = i;
  while (j < text.length && !/[\s$]/.test(text[j]!)) j++;
  if (j === i) return { kind: 'unclosed' };
  return { kind: 'ok', content: text.slice(i, j), end: j };
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
      if (depth === 0) return { kind: 'ok', content: text.slice(open + 1, i), end: i + 1 };
    }
  }
  return { kind: 'unclosed' };
}

/**
 * Limits that keep extraction linear on degenerate output (docs/answers.md, "Extraction"): the
 * stated-answer, math-span and number rules look only at the last EXTRACT_TAIL characters; a
 * stated answer is cut at STATED_MAX characters; boxes are joined across gaps of at most
 * BOX_GAP_MAX characters, at most MAX_JOINED_BOXES of them.
 */
export const EXTRACT_TAIL = 32_768;
const STATED_MAX = 1000;
const BOX_GAP_MAX = 64;
const MAX_JOINED_BOXES = 16;

/**
 * What may stand between two boxes of one final statement: spaces, `$`, `,` `;` `&`, spacing
 * commands, "and". Not "or": `\boxed{5} or \boxed{6}` is a model hesitating, and its last box counts.
 */
const BOX_GAP =
  /^(?:\s|\$|[,;&]|\\(?:quad|qquad|[,;: ()[\]\\])|\\(?:text|textnormal|textrm|mbox|mathrm)\s*\{\s*(?:and|,)?\s*\}|\band\b)*$/;

/** The last `\boxed` / `\fbox` whose command ends before `before`: the end of its command, or -1. */
function lastBoxCommand(text: string, before: number, first: FirstBoxes): number {
  return Math.max(lastCommandEnd(text, '\\boxed', before, first.boxed), lastCommandEnd(text, '\\fbox', before, first.fbox));
}

/** Where `\boxed` and `\fbox` first occur in a text (-1: absent). */
interface FirstBoxes {
  boxed: number;
  fbox: number;
}

interface FinalBoxes {
  /** The joined content; null when the last box is unclosed (a truncated generation). */
  content: string | null;
  /** Where the last box ends (the end of the text when it is unclosed). */
  end: number;
}

/**
 * The boxes of the final statement. The last box, and before it every box separated from the next
 * one only by spaces, `$`, punctuation, spacing commands or "and" (`\boxed{2} and \boxed{6}`,
 * `$\boxed{1}\boxed{2}$`), form ONE answer, joined by ", ". An earlier box followed by prose ("first
 * \boxed{5}, then \boxed{6}") is an intermediate result and is not part of it. `undefined`: no box.
 */
export function finalBoxes(text: string): FinalBoxes | undefined {
  const first: FirstBoxes = { boxed: text.indexOf('\\boxed'), fbox: text.indexOf('\\fbox') };
  const last = lastBoxCommand(text, text.length, first);
  if (last < 0) return undefined;
  const r = readBox(text, last);
  if (r.kind !== 'ok') return { content: null, end: text.length };
  const parts = [r.content.trim()];
  let start = last; // the boxes before this one must end within BOX_GAP_MAX of it
  while (parts.length < MAX_JOINED_BOXES) {
    const cmdStart = start - (text.startsWith('\\fbox', start - 5) ? 5 : 6);
    const prev = lastBoxCommand(text, cmdStart, first);
    if (prev < 0) break;
    const p = readBox(text, prev);
    if (p.kind !== 'ok' || p.end > cmdStart || cmdStart - p.end > BOX_GAP_MAX) break;
    if (!BOX_GAP.test(text.slice(p.end, cmdStart))) break;
    parts.unshift(p.content.trim());
    start = prev;
  }
  return { content: parts.length === 1 ? parts[0]! : parts.join(', '), end: r.end };
}

/** The last box's content; `undefined` when there is no box, `null` when the last is unclosed. */
export function lastBox(text: string): string | null | undefined {
  return finalBoxes(text)?.content;
}

/** The math span a stated answer opens with (`$3$. I hope it is correct.` -> `3`), if any. */
function leadingMath(t: string): string | null {
  const m = /^(\$\$?|\\\(|\\\[)/.exec(t);
  if (!m) return null;
  const close = m[1] === '\\(' ? '\\)' : m[1] === '\\[' ? '\\]' : m[1]!;
  const end = t.indexOf(close, m[1]!.length);
  return end < 0 ? null : t.slice(m[1]!.length, end);
}

/** `s` without the characters of `chars` at its end (a loop: a regex `[..]+$` is quadratic on `!!!!…x`). */
function trimEndChars(s: string, chars: string): string {
  let j = s.length;
  while (j > 0 && chars.includes(s[j - 1]!)) j--;
  return s.slice(0, j);
}

function trimStartChars(s: string, chars: string): string {
  let i = 0;
  while (i < s.length && chars.includes(s[i]!)) i++;
  return s.slice(i);
}

/** Strips the decoration models put around a stated answer: markdown bold, `$`, a final period. */
export function cleanStated(s: string): string {
  let t = s;
  // Stop at the end of the line: what follows is usually more prose.
  const nl = t.indexOf('\n');
  if (nl >= 0) t = t.slice(0, nl);
  // Bounded, and runs of spaces are one space: every pattern below then runs on short text.
  if (t.length > STATED_MAX) t = t.slice(0, STATED_MAX);
  t = t.replace(/\s+/g, ' ').trim();
  t = t.replace(/^(?:\*\*|__) ?/, '');
  // A quoted answer: "$12 $ and $13 $" (the quotes possibly escaped, as in a JSON string).
  const q = t.startsWith('"') ? 1 : t.startsWith('\\"') ? 2 : 0;
  if (q > 0) {
    const close = t.indexOf('"', q);
    t = close < 0 ? t.slice(q) : trimEndChars(t.slice(q, close), '\\');
  }
  // A leading span is the answer, unless more spans joined by "and"/"or"/"," follow it.
  const math = leadingMath(t);
  if (math !== null && !/^\$?\$ ?(?:,|and|or) ?\$/.test(t.slice(t.indexOf(math) + math.length))) t = math;
  // Stop at a sentence boundary ("3. I hope it is correct."), never inside a decimal.
  else {
    t = t.split(/\. (?=[A-Z])/)[0]!;
    // "1/2 since 2 > 1", "12, which is even": the reason after the answer is not part of it.
    t = t.split(/ (?=(?:since|because|as|which|where|so|when|if|but|for) )|, (?=(?!and\b|or\b)[a-z]{2,})/)[0]!;
  }
  for (let k = 0; k < 3; k++) {
    const before = t;
    if (t.startsWith('**')) t = t.slice(2);
    if (t.endsWith('**')) t = t.slice(0, -2);
    t = trimEndChars(trimStartChars(t.trim(), '$'), '$').trim();
    if (t.startsWith('\\(') || t.startsWith('\\[')) t = t.slice(2);
    if (t.endsWith('\\)') || t.endsWith('\\]')) t = t.slice(0, -2);
    t = trimEndChars(t.trim(), '.。;,! ').trim();
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

/**
 * Number-like tokens, longest forms first: LaTeX fraction, mixed number, a/b, thousands-grouped
 * (also with MATH's `,\!`, `\,` and `{,}` separators),
 * decimal comma (`2,74`: one comma, never three digits after it), decimal/integer.
 * At most 20 thousands groups (10^63): an unbounded group run that fails at its end was retried
 * from every group, quadratic on a crafted digit run (docs/answers.md, "Limits").
 */
const NUMBER_RE =
  /-?\\[dtc]?frac\s*\{\s*-?\d+\s*\}\s*\{\s*\d+\s*\}|-?\d+ +\d+ *\/ *\d+(?![\d.])|-?\d+(?:\.\d+)? *\/ *\d+(?:\.\d+)?|-?\d{1,3}(?:(?:,\\! ?|\\[,!] ?|\{ ?, ?\} ?|,)\d{3}){1,20}(?:\.\d+)?(?![\d,])|(?<![\d,.])-?\d+,(?:\d{1,2}|\d{4,})(?![\d,.])|-?\d*\.?\d+(?:[eE][-+]?\d+)?(?: ?\\?%)?/g;

/** The last number in free text (docs/contract.md#answer-extraction fallback); mixed numbers become `a\frac{b}{c}`. */
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

interface Span {
  content: string;
  end: number;
}

/**
 * The last math span of `t`: `$..$` and `\(..\)` on one line, `$$..$$` and `\[..\]` on any.
 * One left-to-right pass (pairing needs the left context); a `$` with no partner on its line is a
 * stray (a price), and a closer searched for once and not found is never searched for again, so
 * the pass is linear even on `$$$$…` or `\(\(\(…`.
 */
export function lastMathSpan(t: string): Span | null {
  const next = new Map<string, number>();
  const closer = (s: string, from: number): number => {
    const c = next.get(s);
    if (c !== undefined && (c === -1 || c >= from)) return c;
    const j = t.indexOf(s, from);
    next.set(s, j);
    return j;
  };
  let last: Span | null = null;
  const n = t.length;
  let i = 0;
  while (i < n) {
    const c = t.charCodeAt(i);
    if (c === 92 /* \ */) {
      const d = t[i + 1];
      if (d === '(' || d === '[') {
        const j = closer(d === '(' ? '\\)' : '\\]', i + 2);
        const content = j < 0 ? '' : t.slice(i + 2, j);
        if (j >= 0 && !(d === '(' && content.includes('\n'))) {
          last = { content, end: j + 2 };
          i = j + 2;
          continue;
        }
      }
      i += 2; // an escaped character (`\$` is a dollar sign, not a delimiter)
      continue;
    }
    if (c === 36 /* $ */) {
      if (t.charCodeAt(i + 1) === 36) {
        const j = closer('$$', i + 2);
        if (j < 0) {
          i += 2;
          continue;
        }
        last = { content: t.slice(i + 2, j), end: j + 2 };
        i = j + 2;
        continue;
      }
      let j = i + 1;
      while (j < n && t.charCodeAt(j) !== 36 && t.charCodeAt(j) !== 10) j += t.charCodeAt(j) === 92 ? 2 : 1;
      if (j < n && t.charCodeAt(j) === 36) {
        last = { content: t.slice(i + 1, j), end: j + 1 };
        i = j + 1;
      } else i = j; // a stray `$`: nothing it could open on this line
      continue;
    }
    i++;
  }
  return last;
}

/** A span's content without the sentence's final punctuation written inside it (`$\frac13.$`); an ellipsis stays. */
function spanAnswer(content: string): string {
  const t = content.trim();
  return /[.,;:]$/.test(t) && !t.endsWith('..') ? t.slice(0, -1).trim() : t;
}

const FINAL_RE = /final\s+answer\s*(?:\*\*|__)?\s*(?:is|:)\s*(?:\*\*|__)?\s*:?/iy;
const ANSWER_RE = /answer\s*(?:\*\*|__)?\s*(?:is|:)\s*(?:\*\*|__)?\s*:?/iy;

/**
 * The text after the last "<word>… is/:" (sticky `re` tried at each occurrence of `word`, from
 * the end), and where that statement starts: a long response is scanned by `lastIndexOf`, not by
 * a regex over all of it.
 */
function statedAfter(text: string, lower: string, word: string, re: RegExp): { at: number; text: string } | null {
  for (let i = lower.lastIndexOf(word); i >= 0; i = i > 0 ? lower.lastIndexOf(word, i - 1) : -1) {
    if (i > 0 && /\w/.test(text[i - 1]!)) continue; // a word boundary before it
    re.lastIndex = i;
    const m = re.exec(text);
    if (m) return { at: i, text: text.slice(i + m[0].length) };
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

/**
 * Reduces a stated answer ("The largest $n$ is 34") to its answer part. `numberFallback`: a
 * sentence with no "is"/"=" may give its last number (not when a box precedes the statement:
 * "\boxed{\frac12}. So the answer is 1 out of 2." keeps the box).
 */
function refineStated(raw: string, numberFallback = true): string | null {
  const line = raw.length > STATED_MAX + 64 ? raw.slice(0, STATED_MAX + 64) : raw;
  const nl = line.indexOf('\n');
  const box = lastBox(nl >= 0 ? line.slice(0, nl) : line);
  if (box !== undefined) return box;
  const t = cleanStated(line);
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
  return numberFallback ? lastNumber(t) : null;
}

/** Characters a degenerate response trails off with: spaces, sentence punctuation, emphasis. */
const FILLER = ' \t\n\r\f\v\u00a0\u3000.!?,;:*~-=_#\u2026\u3002\uff01\uff0c\uff1f\uff1b\uff1a';

/**
 * Where a response's content ends: trailing filler (FILLER characters, and a run of three or
 * more `$`) is skipped by one backward scan, so "the answer is 4" followed by 100 K spaces or
 * `$$$…` keeps its answer inside the examined tail.
 */
function contentEnd(text: string): number {
  let j = text.length;
  for (;;) {
    while (j > 0 && FILLER.includes(text[j - 1]!)) j--;
    let k = j;
    while (k > 0 && text.charCodeAt(k - 1) === 36) k--;
    if (j - k < 3) return j;
    j = k;
  }
}

/**
 * Extracts the answer of a response (docs/contract.md#answer-extraction). `null`: no extractable answer (including a
 * truncated, unclosed last box); `""`: the empty box `\boxed{}`.
 */
export function extractAnswer(response: string, opts?: ExtractOptions): string | null {
  // Most responses have neither: `includes` scans far faster than a regex replace that finds nothing.
  let text = response.includes('\r') ? response.replace(/\r\n?/g, '\n') : response;
  if (text.includes('\u2212')) text = text.replace(/\u2212/g, '-');
  const box = finalBoxes(text);
  // Trailing filler is not part of any statement: the tail is taken before it.
  const end = contentEnd(text);
  if (end < text.length) text = text.slice(0, end);
  // With a box, only what follows it can hold a later statement ("... \boxed{255}. Final
  // Answer: The final answer is $10,455$."): the statement that comes last is the final one.
  const from = box === undefined ? 0 : Math.min(box.end, text.length);
  const offset = Math.max(from, text.length - EXTRACT_TAIL);
  const tail = offset > 0 ? text.slice(offset) : text;
  const lower = tail.toLowerCase();
  const final = lower.includes('final') ? statedAfter(tail, lower, 'final', FINAL_RE) : null;
  const stated = final ?? (lower.includes('answer') ? statedAfter(tail, lower, 'answer', ANSWER_RE) : null);
  if (stated !== null) {
    const r = refineStated(stated.text, box === undefined);
    // "So answer is consistent.": a lone word after a bare "answer is" is prose, not an answer.
    if (r !== null && (final !== null || !/^[A-Za-z]{2,}$/.test(r))) return r;
  }
  if (box !== undefined) return box.content;
  // A response that is only a choice letter ("**B**", "(B)", "B.").
  const whole = text.length <= 32 && text.trim().length <= 8 ? choiceLetter(cleanStated(text)) : null;
  if (whole) return whole;
  // The last math span, unless a number comes after it ("$d = \frac{90}{n}$ … there are 12").
  const span = lastMathSpan(tail);
  if (span !== null && span.content.trim() !== '') {
    const after = opts?.lastNumber === false ? null : lastNumber(tail.slice(span.end));
    return after ?? spanAnswer(span.content);
  }
  if (opts?.lastNumber === false) return null;
  return lastNumber(tail);
}
