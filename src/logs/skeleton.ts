// A JSON line without its roll-out texts, from the line's bytes: for the run index, which keeps
// every number of a record but never its texts (they are read back from disk by offset). A group
// record of degenerate roll-outs is one line of megabytes; decoding it into a string and parsing it
// whole would make (and then collect) megabytes of strings on the editor's extension host, in one
// go. The scanner walks the bytes instead, in steps that a caller can interleave with other work,
// and leaves out the text strings without decoding them: the rest of the line (ids, numbers,
// answers, the prompt) is decoded and parsed as usual — a few hundred bytes per roll-out.
//
// Left out (replaced by ""), whatever their length:
//   - the string value of "response" and of "output" in the top-level object (a native roll-out
//     record's text; a verl line's text),
//   - the string value of "response" in each object of the top-level "rollouts" array (a native
//     group record's texts).
// Nothing else: a "response" anywhere else (inside "extra", say) is kept. `elided` says which of the
// three were left out, so a reader can tell whether its format reads any of them (a verl line keeps
// every unknown top-level key, so for verl only "output" may go; see JsonlFileParser.lineBytes).
//
// Exactness: the skeleton is the line with some string tokens replaced by the empty string token,
// so it is valid JSON exactly when the line is — provided each left-out string is a valid JSON
// string, which the scanner checks (no raw control character, escapes `\" \\ \/ \b \f \n \r \t` and
// `\u` + four hex digits). Bytes outside the left-out strings are copied as they are, so invalid
// UTF-8 there decodes to the same U+FFFD characters (a cut is always next to a `"`). The scanner
// returns null when the line cannot be valid JSON (a string or a container left open, a bad escape
// or a control character in a text it would leave out): the caller then parses the whole text,
// which reports the error exactly as before.

/** `elided` flags. */
export const ELIDED_RESPONSE = 1;
export const ELIDED_OUTPUT = 2;
export const ELIDED_ITEM_RESPONSE = 4;

export interface Skeleton {
  /** The line (from `start`) with the left-out strings as "", decoded. */
  text: string;
  /** ELIDED_* flags of what was left out (0: `text` is the whole line). */
  elided: number;
}

/** Bytes scanned between two yields of the generator (well under a millisecond). */
export const SKELETON_STEP = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

// container frames: kind in the low bit, context above it
const OBJ = 0;
const ARR = 1;
const CTX_OTHER = 0;
const CTX_TOP = 2; // the top-level object
const CTX_ROLLOUTS = 4; // the top-level object's "rollouts" array
const CTX_ITEM = 6; // an object of that array

const KEY_OTHER = 0;
const KEY_RESPONSE = 1;
const KEY_OUTPUT = 2;
const KEY_ROLLOUTS = 3;

const NAMES: Array<[number, Uint8Array]> = [
  [KEY_RESPONSE, Buffer.from('response')],
  [KEY_OUTPUT, Buffer.from('output')],
  [KEY_ROLLOUTS, Buffer.from('rollouts')],
];

function keyOf(b: Uint8Array, from: number, to: number, escaped: boolean): number {
  if (escaped) {
    // a key written with escapes ("respons\u0065"): decode it as JSON.parse would
    let k: unknown;
    try {
      k = JSON.parse(Buffer.from(b.buffer, b.byteOffset + from - 1, to - from + 2).toString('utf8'));
    } catch {
      return KEY_OTHER; // not a valid string: the skeleton does not parse either
    }
    return k === 'response' ? KEY_RESPONSE : k === 'output' ? KEY_OUTPUT : k === 'rollouts' ? KEY_ROLLOUTS : KEY_OTHER;
  }
  outer: for (const [id, name] of NAMES) {
    if (to - from !== name.length) continue;
    for (let i = 0; i < name.length; i++) if (b[from + i] !== name[i]) continue outer;
    return id;
  }
  return KEY_OTHER;
}

/**
 * A left-out text from `j`: checks it is a valid JSON string body up to its closing quote; returns
 * the quote's index, or where it stopped (at or past `lim`, never inside an escape; `b.length`
 * when the string is not closed), or -1 when it is not a valid JSON string.
 */
function textEnd(b: Uint8Array, j: number, lim: number): number {
  const n = b.length;
  for (; j < lim; j++) {
    const d = b[j];
    if (d === QUOTE) return j;
    if (d < 0x20) return -1;
    if (d === BACKSLASH) {
      if (j + 1 >= n) return n;
      const e = b[j + 1];
      if (e === 0x75 /* u */) {
        if (j + 5 >= n) return n;
        if (!isHex(b[j + 2]) || !isHex(b[j + 3]) || !isHex(b[j + 4]) || !isHex(b[j + 5])) return -1;
        j += 5;
      } else if (e === QUOTE || e === BACKSLASH || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) j++;
      else return -1;
    }
  }
  return j;
}

let sawEscape = false;

/** A kept string from `j`: only its end matters (JSON.parse checks the rest in the skeleton). Sets `sawEscape`. */
function stringEnd(b: Uint8Array, j: number, lim: number): number {
  sawEscape = false;
  for (; j < lim; j++) {
    const d = b[j];
    if (d === QUOTE) return j;
    if (d === BACKSLASH) {
      sawEscape = true;
      j++;
    }
  }
  return j;
}

const isHex = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

const STR_KEY = 1;
const STR_KEPT = 2;
const STR_TEXT = 3;

/**
 * The scanner's state between steps. (`step` is a plain method, not a generator, so that V8
 * optimises its loops while they run.)
 */
class Scanner {
  private i: number;
  private readonly stack: number[] = [];
  private readonly keep: Array<[number, number]> = [];
  private keepFrom: number;
  private elided = 0;
  private expectKey = false;
  private key = KEY_OTHER;
  private seenTop = false;
  /** Inside a string: STR_*, its first byte, its ELIDED_* flag, whether it holds an escape. */
  private str = 0;
  private strFrom = 0;
  private strFlag = 0;
  private strEscaped = false;
  failed = false;

  constructor(
    private readonly b: Uint8Array,
    private readonly start: number,
  ) {
    this.i = start;
    this.keepFrom = start;
  }

  /** Scans about `budget` more bytes; true when the line is done (`failed`, or `result()`). */
  step(budget: number): boolean {
    const b = this.b;
    const n = b.length;
    const lim = Math.min(n, this.i + budget);
    let i = this.i;
    while (i < lim) {
      if (this.str) {
        const j = this.str === STR_TEXT ? textEnd(b, i, lim) : stringEnd(b, i, lim);
        if (j < 0) return (this.failed = true); // not a valid JSON string: nor is the line JSON
        if (this.str !== STR_TEXT && sawEscape) this.strEscaped = true;
        // j is at a character of its own (never inside an escape): the closing quote, or where
        // this step ended
        if (j >= n) return (this.failed = true); // the string is not closed: not (yet) JSON
        if (b[j] !== QUOTE) {
          i = j;
          break;
        }
        this.closeString(j);
        i = j + 1;
        continue;
      }
      // between strings: structure
      for (; i < lim; i++) {
        const c = b[i];
        if (c === QUOTE) break;
        if (c === 0x7b /* { */ || c === 0x5b /* [ */) this.open(c);
        else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
          this.stack.pop();
          this.expectKey = false;
        } else if (c === 0x2c /* , */) this.expectKey = this.stack.length > 0 && (this.stack[this.stack.length - 1] & 1) === OBJ;
        else if (this.stack.length === 0 && c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) this.seenTop = true; // a top-level value that is not an object
      }
      if (i < lim) {
        this.openString(i);
        i++;
      }
    }
    this.i = i;
    if (i < n) return false;
    if (this.str || this.stack.length) this.failed = true; // a string or a container left open: not (yet) JSON
    return true;
  }

  private open(c: number): void {
    const stack = this.stack;
    const top = stack.length ? stack[stack.length - 1] : -1;
    let ctx = CTX_OTHER;
    if (top < 0) {
      if (c === 0x7b && !this.seenTop) ctx = CTX_TOP;
      this.seenTop = true;
    } else if (top === (CTX_TOP | OBJ) && this.key === KEY_ROLLOUTS && c === 0x5b) ctx = CTX_ROLLOUTS;
    else if (top === (CTX_ROLLOUTS | ARR) && c === 0x7b) ctx = CTX_ITEM;
    stack.push(ctx | (c === 0x7b ? OBJ : ARR));
    this.expectKey = c === 0x7b;
    this.key = KEY_OTHER;
  }

  /** A string opens at `at` (its opening quote). */
  private openString(at: number): void {
    const stack = this.stack;
    const top = stack.length ? stack[stack.length - 1] : -1;
    const inObj = top >= 0 && (top & 1) === OBJ;
    const ctx = top >= 0 ? top & ~1 : CTX_OTHER;
    let flag = 0;
    if (inObj && !this.expectKey) {
      if (ctx === CTX_TOP && this.key === KEY_RESPONSE) flag = ELIDED_RESPONSE;
      else if (ctx === CTX_TOP && this.key === KEY_OUTPUT) flag = ELIDED_OUTPUT;
      else if (ctx === CTX_ITEM && this.key === KEY_RESPONSE) flag = ELIDED_ITEM_RESPONSE;
    }
    if (stack.length === 0) this.seenTop = true;
    this.str = inObj && this.expectKey ? STR_KEY : flag ? STR_TEXT : STR_KEPT;
    this.strFlag = flag;
    this.strFrom = at + 1;
    this.strEscaped = false;
  }

  private closeString(to: number): void {
    if (this.str === STR_KEY) {
      this.key = keyOf(this.b, this.strFrom, to, this.strEscaped);
      this.expectKey = false;
    } else if (this.str === STR_TEXT) {
      this.keep.push([this.keepFrom, this.strFrom]);
      this.keepFrom = to;
      this.elided |= this.strFlag;
    }
    this.str = 0;
  }

  result(): Skeleton | null {
    if (this.failed) return null;
    const b = this.b;
    if (!this.elided) return { text: Buffer.from(b.buffer, b.byteOffset + this.start, b.length - this.start).toString('utf8'), elided: 0 };
    const parts = [...this.keep, [this.keepFrom, b.length] as [number, number]].map(([f, t]) => Buffer.from(b.buffer, b.byteOffset + f, t - f));
    return { text: Buffer.concat(parts).toString('utf8'), elided: this.elided };
  }
}

/**
 * Scans `bytes` from `start` (a whole line, without its newline); yields every SKELETON_STEP
 * bytes or so, and returns the skeleton, or null when the line cannot be valid JSON.
 */
export function* skeletonOf(bytes: Uint8Array, start = 0): Generator<void, Skeleton | null, void> {
  const s = new Scanner(bytes, start);
  while (!s.step(SKELETON_STEP)) yield;
  return s.result();
}

/** Runs the scanner to the end in one go (tests, and callers that need no slicing). */
export function skeletonSync(bytes: Uint8Array, start = 0): Skeleton | null {
  const it = skeletonOf(bytes, start);
  for (;;) {
    const r = it.next();
    if (r.done) return r.value;
  }
}

/** `text.trim() === ''` for the line's decoded text, without decoding a long line that is not blank. */
export function isBlankLine(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) continue;
    if (c < 0x80) return false;
    // non-ASCII: Unicode white space (NBSP, U+2028, a BOM, …) also trims; decide on the characters
    const head = Buffer.from(bytes.buffer, bytes.byteOffset + i, Math.min(256, bytes.length - i)).toString('utf8');
    const k = head.search(/\S/);
    // (the prefix may end in a cut character, decoded as U+FFFD: only a character well before
    // the end counts)
    if (k >= 0 && k < head.length - 3) return false;
    return Buffer.from(bytes.buffer, bytes.byteOffset + i, bytes.length - i).toString('utf8').trim() === '';
  }
  return true;
}
