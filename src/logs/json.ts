// JSON line parsing that tolerates Python's non-finite tokens. Python's `json.dumps` writes `NaN`,
// `Infinity` and `-Infinity` (allow_nan=True is its default); JSON.parse rejects them. A line that
// fails to parse is retried once with those bare tokens (outside strings) replaced by `null`, so the
// value reads as missing and the caller can say so once.

export interface JsonParse {
  value: unknown;
  /** True when NaN/Infinity tokens were replaced by null. */
  nonFinite: boolean;
}

/** Parses one JSON line; throws SyntaxError when it is not JSON even after the NaN rewrite. */
export function parseJsonLine(text: string): JsonParse {
  try {
    return { value: JSON.parse(text), nonFinite: false };
  } catch (err) {
    if (!/NaN|Infinity/.test(text)) throw err;
    const rewritten = replaceNonFinite(text);
    if (rewritten === text) throw err;
    return { value: JSON.parse(rewritten), nonFinite: true };
  }
}

/** Replaces bare NaN / Infinity / -Infinity tokens outside JSON strings by null. */
export function replaceNonFinite(text: string): string {
  let out = '';
  let last = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) {
      inString = true;
      continue;
    }
    let len = 0;
    if (c === 78 /* N */ && text.startsWith('NaN', i)) len = 3;
    else if (c === 73 /* I */ && text.startsWith('Infinity', i)) len = 8;
    else if (c === 45 /* - */ && text.startsWith('-Infinity', i)) len = 9;
    if (len) {
      out += text.slice(last, i) + 'null';
      i += len - 1;
      last = i + 1;
    }
  }
  return last === 0 ? text : out + text.slice(last);
}

/** A finite number, or null (NaN, ±Infinity, null, absent). */
export function finiteOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}
