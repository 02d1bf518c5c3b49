// String-level normalisation of an answer (docs/contract.md#answer-equivalence), in a fixed, documented order
// (docs/answers.md). Every rewrite that changes the text is recorded by name so the extension
// can show WHY two answers were judged equal.

export interface Normalised {
  /** The rewritten answer text, trimmed. */
  text: string;
  /** Names of the rewrites that changed the text, in order. */
  rewrites: string[];
  /** A percent sign (or the word) was removed: the answer reads as X or X/100 (§3.2). */
  percent: boolean;
}

/** `needs`: substrings the rule cannot match without any of; a text lacking them all skips the rule. */
type Rule = readonly [name: string, re: RegExp, by: string | ((...m: string[]) => string), needs?: readonly string[]];

const UNICODE: Record<string, string> = {
  '\u2212': '-', '\u2012': '-', '\u2013': '-', '\u2014': '-', '\u00d7': '\\times ', '\u22c5': '\\cdot ',
  '\u00b7': '\\cdot ', '\u00f7': '/', '\u03c0': '\\pi ', '\u221e': '\\infty ', '\u221a': '\\sqrt',
  '\u2264': '\\le ', '\u2265': '\\ge ', '\u2260': '\\ne ', '\u00b0': '^\\circ', '\u222a': '\\cup ',
  '\u2208': '\\in ', '\u00b1': '\\pm ', '\uff0c': ',', '\u2217': '*', '\u2205': '\\emptyset ',
  '\u2248': '\\approx ',
};

/** Letters that are function names, not words (they never make an answer "text"). */
export const FUNCTION_WORDS = new Set([
  'sin', 'cos', 'tan', 'sec', 'csc', 'cot', 'arcsin', 'arccos', 'arctan', 'sinh', 'cosh', 'tanh',
  'log', 'ln', 'exp', 'sqrt', 'lg', 'max', 'min', 'gcd', 'lcm', 'det', 'mod', 'arcsec', 'arccsc', 'arccot',
]);

const TEXT_CMD = '(?:text|textnormal|textrm|textit|textbf|textup|mathrm|mbox|mathit|mathbf|mathsf|operatorname|boldsymbol|bm)';

/** Answers longer than this are not normalised (the same limit as parsing, classes.ts). */
export const MAX_NORMALISED = 2000;

/** Rules in application order; each group is one documented step. */
/** Commands whose doubled form `\\frac` (from JSON-escaped or raw-string logs) is repaired. */
const DOUBLED = new RegExp(
  '(?<!\\\\)\\\\\\\\(?=(?:' +
    'frac|dfrac|tfrac|cfrac|sqrt|left|right|le|leq|ge|geq|ne|neq|lt|gt|cdot|times|div|pm|mp|pi|infty|' +
    'text|textbf|textnormal|mathrm|mathbf|mbox|boxed|fbox|begin|end|approx|in|cup|cap|circ|degree|binom|dbinom|' +
    'sin|cos|tan|sec|csc|cot|log|ln|exp|alpha|beta|gamma|delta|theta|lambda|mu|sigma|phi|omega|quad|qquad|' +
    'emptyset|varnothing|mathbb|lfloor|rfloor|lceil|rceil|vert|lvert|rvert|sum|prod|dots|ldots|cdots|%|\\$|\\{|\\})(?![A-Za-z]))',
  'g',
);

/** A bare name before `\approx` (`x \approx 11`, `|AB|\approx 2`): its value is the approximation. */
const APPROX_NAME = /^(?:[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?'*|[A-Z]{2,3}|\|[A-Z]{2,3}\||\\(?!pi\b)[A-Za-z]+(?:_\{?[A-Za-z0-9]+\}?)?)$/;

/**
 * `\approx` is a relation like `=`, but what follows it is an approximation of what precedes it:
 * `\frac13 \approx 0.333` is 1/3 and `x = 1/3 \approx 0.33` is x = 1/3 (the approximation is
 * dropped); `x \approx 11` assigns the approximate value (x = 11).
 */
function dropApproximation(s: string): string {
  const i = s.indexOf('\\approx');
  if (i < 0) return s;
  const before = s.slice(0, i).trim();
  const after = s.slice(s.lastIndexOf('\\approx') + 7).trim();
  if (before === '') return after;
  return APPROX_NAME.test(before) && before !== 'e' ? `${before}=${after}` : before;
}

const RULES: readonly Rule[] = [
  // 0. Doubled backslashes before a known command (`\\frac` -> `\frac`); a `\\` row break stays.
  ['doubled backslashes repaired', DOUBLED, '\\', ['\\\\']],
  // 1. Unicode (applyUnicode, before these rules). 2. Markdown emphasis and code ticks around the answer.
  // `x**2` is a power, not emphasis: only paired or outer ** are markdown.
  ['markdown', /\*\*([^*]+)\*\*|^\s*\*\*|\*\*\s*$|`/g, '$1'],
  // 3. Math delimiters and display-style switches.
  ['math delimiters', /^\s*\$+|\$+\s*$|^\s*\\[([]|\\[)\]]\s*$|\\displaystyle|\\textstyle/g, ''],
  ['boxed wrapper', /^\\(?:boxed|fbox)\{([\s\S]*)\}$/, '$1'],
  ['approximation dropped', /^[\s\S]*\\approx(?![A-Za-z])[\s\S]*$/, (m: string) => dropApproximation(m), ['\\approx']],
  // 4. Sizing of delimiters.
  ['\\left/\\right', /\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big|bigg|Bigg)(?![A-Za-z])\s*\.?/g, ''],
  // 5. Fraction and binomial variants ({n \choose k} too).
  ['\\choose -> \\binom', /\{([^{}]+?)\\choose([^{}]+?)\}/g, '\\binom{$1}{$2}'],
  ['\\dfrac/\\tfrac/\\cfrac -> \\frac', /\\[dtc]frac(?![A-Za-z])/g, '\\frac'],
  ['\\dbinom/\\tbinom -> \\binom', /\\[dt]binom(?![A-Za-z])/g, '\\binom'],
  // 6. \text{}: trailing units go, "and"/"or" separate list items, words are unwrapped.
  // A trailing \text{..} with a letter in it, after a value, is a unit ("5\text{ cm}", "10\text{m}");
  // \mathrm{e} and \mathrm{i} are constants, not units.
  ['unit dropped', new RegExp(`(?<=[\\d}).\\s]|\\\\pi)(?:\\\\[ ,;:!]|\\s)*(?:\\\\${TEXT_CMD}\\{(?!\\s*[ei]\\s*\\})[^{}A-Za-z]*[A-Za-z][^{}]*\\}(?:\\s*\\^\\s*\\{?\\d\\}?)?\\s*)+$`), ''],
  ['"and"/"or" -> ","', new RegExp(`(?:\\s*,)?\\s*(?:\\\\${TEXT_CMD}\\{\\s*(?:and|or)\\s*\\}|\\s(?:and|or)\\s)\\s*`, 'g'), ','],
  // "or"/"and" written without spaces between two values: `(11,7)or(7,11)`, `1or2`, `x=1or x=2`.
  ['"and"/"or" -> ","', /(?<=[\d)\]}])\s?(?:or|and)\s?(?=[\d([\\{-]|[A-Za-z]\s?=)/g, ',', ['or', 'and']],
  ['\\text{} unwrapped', new RegExp(`\\\\${TEXT_CMD}\\{([^{}]*)\\}`, 'g'), '$1'],
  ['option word dropped', /^\s*(?:option|choice)\s+(?=\(?[A-Ja-j]\)?\s*$)/i, ''],
  // 6b. Bare function names become commands (sin x -> \sin x).
  ['function names', /(?<![\\A-Za-z])(arcsin|arccos|arctan|sinh|cosh|tanh|sin|cos|tan|sec|csc|cot|ln|log|exp|sqrt|pi)(?![A-Za-z])/g, '\\$1 '],
  // 7. Degrees: inside a trig function they are converted (\sin 30^\circ = 1/2), elsewhere dropped.
  ['trig degrees -> radians',
    /\\(sin|cos|tan|sec|csc|cot)\s*(?:\(\s*(\d+(?:\.\d+)?)\s*\^\s*\{?\s*\\circ\s*\}?\s*\)|(\d+(?:\.\d+)?)\s*\^\s*\{?\s*\\circ\s*\}?)/g,
    (_m: string, f: string, a: string | undefined, b: string | undefined) => `\\${f}(\\frac{${a ?? b}\\pi}{180})`],
  ['degrees dropped', /\^\s*\{?\s*\\circ\s*\}?|\\circ|\\degree|\s*\bdeg(?:ree)?s?\b\.?\s*$/g, ''],
  // 8. Percent.
  ['percent dropped', /\\%|%|\s*\bpercent\b\.?\s*$/g, ''],
  // 9. Currency.
  ['currency dropped', /\\\$|\$|€|£|\\euro|\s*\b(?:dollars?|USD|cents?)\b\.?\s*$/g, ''],
  // 10. Thousands separators: groups of exactly three digits after a non-zero-led first group.
  // Unambiguous separators ({,} and \,) always; a plain comma or space only outside a bracketed
  // list, where "(12,102)" is a pair, not 12102.
  // `10,\!080`, `11,\! 111,\! 100`, `14{,}916`, `14 {, }916`, `1\,000`: LaTeX separators.
  ['thousands separators', /(?<![\d.])([1-9]\d{0,2})((?:(?: ?\{ ?, ?\} ?|,? ?\\[,! ] ?)\d{3})+)(?![\d])/g,
    (_m, head: string, rest: string) => head + rest.replace(/[^\d]/g, '')],
  ['thousands separators', /(?<![\d.({[,;]\s*)(?<![\d.])([1-9]\d{0,2})((?:[,' ]\d{3})+)(?![\d])(?!\s*[,)\]}/])/g,
    (_m, head: string, rest: string) => head + rest.replace(/[,' ]/g, '')],
  // 11. Spacing commands; "1.5 x 10^3" is scientific notation, not a variable x.
  ['"x 10^" -> \\times', /(?<=\d)\s*[xX]\s*(?=10\s*\^)/g, '\\times '],
  // 11. Spacing commands.
  ['spacing', /(?<!\\)\\[,;:! ]|\\q?quad(?![A-Za-z])|~/g, ' '],
  // 12. \mathbb{R} is the real line.
  ['real line', /\\mathbb\s*\{?R\}?|\u211d/g, '(-\\infty,\\infty)'],
  // 13. Words: infinity, and plain trailing unit words after a value ("10 apples").
  ['infinity word', /(?<!\\)\b(?:infinity|inf)\b/gi, '\\infty '],
  // Words are separated by mandatory spaces so the pattern cannot backtrack exponentially.
  // Not a.m./p.m. (a time of day), and not the body of a sum or product (`\sum_{n=1}^{3} nx`).
  ['unit word dropped', /(?<=[\d}])\s+(?![a-z]\b)(?![ap]m\b)[A-Za-z]{2,}(?:\s+[A-Za-z]{2,})*\.?(?:\s*\^\s*\{?\d\}?)?$/g,
    (...a: string[]) => (/\\(?:sum|prod)(?![A-Za-z])/.test(a[a.length - 1]!) ? a[0]! : '')],
  // 14. Mixed numbers written plainly: "4 4/9" -> 4\frac{4}{9} (a proper fraction only).
  ['mixed number', /(?<![\d.\\}])(\d+) +(\d+) *\/ *(\d+)(?![\d.])/g,
    (m: string, w: string, n: string, d: string) => (BigInt(n) < BigInt(d) ? `${w}\\frac{${n}}{${d}}` : m)],
  // 15. Trailing punctuation and a leading "=" / "is".
  ['trailing punctuation', /(?<!\.)(?:\s?(?:[;:?]|\.(?!\.)|\\\.|,(?!\s?\d)))+\s?$/g, ''],
  ['leading "="', /^\s*(?:=|\bis\b)\s*/, ''],
];

/**
 * Most answers are plain numbers ("12", "3/4", "1,000."): no backslash, letter, $, %, *, `, ~ or
 * non-ASCII character. Every rule but these needs one of those characters to match, so a plain
 * text skips them (checked rule by rule; the rules' output is the same, only faster).
 */
const NOT_PLAIN = /[\\A-Za-z$%*`~\u0080-\uffff]/;
const PLAIN_RULES = new Set(['thousands separators', 'mixed number', 'trailing punctuation', 'leading "="']);

const NON_ASCII = /[^\x00-\x7f]/;

const SUPERSCRIPTS: Record<string, string> = {
  '\u2070': '0', '\u00b9': '1', '\u00b2': '2', '\u00b3': '3', '\u2074': '4', '\u2075': '5', '\u2076': '6',
  '\u2077': '7', '\u2078': '8', '\u2079': '9', '\u207b': '-', '\u207a': '+',
};

function applyUnicode(s: string): string {
  // Every rewrite below (and NFKC) leaves ASCII text as it is.
  if (!NON_ASCII.test(s)) return s;
  // Superscripts before NFKC, which would turn x² into x2 (a product).
  let out = s.replace(/[\u2070\u00b9\u00b2\u00b3\u2074-\u2079\u207a\u207b]+/g,
    (m) => `^{${[...m].map((c) => SUPERSCRIPTS[c]).join('')}}`);
  out = out.normalize('NFKC').replace(/\u2044/g, '/');
  // Bidi and zero-width format controls: invisible, yet `\u202e12` would display as "21" and
  // form its own class.
  out = out.replace(/[\u061c\u200c-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g, '');
  out = out.replace(/[\u00a0\u2000-\u200b\u202f\u205f\u3000]/g, ' ');
  return out.replace(/[\u2212\u2012-\u2014\u00d7\u22c5\u00b7\u00f7\u03c0\u221e\u221a\u2264\u2265\u2260\u00b0\u222a\u2208\u00b1\uff0c\u2217\u2205\u2248]/g,
    (c) => UNICODE[c] ?? c);
}

/** `everyRule` (tests) tries every rule even on plain text, to check that skipping them is exact. */
export function normalise(answer: string, everyRule = false): Normalised {
  const rewrites: string[] = [];
  // Outer whitespace is not a rewrite (every rule's result is trimmed too).
  const trimmed = answer.trim();
  if (trimmed.length > MAX_NORMALISED) {
    // No real final answer is this long: it is compared as text, and no pattern runs on it.
    return { text: trimmed, rewrites: [`longer than ${MAX_NORMALISED} characters: not normalised`], percent: false };
  }
  const unicode = applyUnicode(trimmed);
  if (unicode !== trimmed) rewrites.push('unicode');
  // One space for every run of spaces, one newline for a run with a line break: every pattern
  // below then meets no long run of whitespace.
  let text = unicode.trim();
  if (/\s\s|[\t\r\f\v]/.test(text)) text = text.replace(/\s+/g, (w) => (w.includes('\n') ? '\n' : ' '));
  let percent = false;
  let plain = !everyRule && !NOT_PLAIN.test(text);
  for (const [name, re, by, needs] of RULES) {
    if (plain && !PLAIN_RULES.has(name)) continue;
    if (needs !== undefined && !everyRule && !needs.some((x) => text.includes(x))) continue;
    // Delimiter-like rules can nest ($\boxed{..}$, "5 cm." ...): repeat until stable.
    for (let k = 0; k < 3; k++) {
      const next = text.replace(re, by as string).trim();
      if (next === text) break;
      if (rewrites[rewrites.length - 1] !== name) rewrites.push(name);
      if (name === 'percent dropped') percent = true;
      text = next;
      plain = !everyRule && !NOT_PLAIN.test(text);
    }
  }
  text = text.replace(/\s+/g, ' ').trim();
  return { text, rewrites, percent };
}

/** True when the answer contains a word (3+ letters that are not a function name): it is text. */
export function hasWord(s: string): boolean {
  // Removing commands only shortens letter runs: no run of three letters, no word.
  if (!/[A-Za-z]{3}/.test(s)) return false;
  const bare = s.replace(/\\(?:begin|end)\s*\{[A-Za-z*]*\}/g, ' ').replace(/\\[A-Za-z]+/g, ' ');
  for (const m of bare.matchAll(/[A-Za-z]{3,}/g)) {
    // Three capitals name a triangle or an angle (`ABC`, `\angle ABC = 30^\circ`), not a word.
    if (/^[A-Z]{3}$/.test(m[0])) continue;
    if (!FUNCTION_WORDS.has(m[0].toLowerCase())) return true;
  }
  return false;
}
