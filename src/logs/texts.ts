// Reading a roll-out's text back from disk by its record's byte range (the index never keeps text).
import { readRange } from './lines.js';
import { parseJsonLine } from './json.js';
import { readTrlCompletion } from './trl.js';
import type { RolloutSource } from './types.js';

/** One parsed line is cached: the roll-outs of a group record share their line. */
let last: { file: string; offset: number; length: number; value: Record<string, unknown> } | undefined;

async function readRecord(s: RolloutSource): Promise<Record<string, unknown>> {
  if (last && last.file === s.file && last.offset === s.offset && last.length === s.length) return last.value;
  const buf = await readRange(s.file, s.offset, s.length);
  if (buf.length !== s.length) throw new Error(`${s.file}:${s.line}: the record is no longer on disk (file changed)`);
  let text = buf.toString('utf8');
  if (s.offset === 0 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value: unknown;
  try {
    value = parseJsonLine(text).value;
  } catch {
    throw new Error(`${s.file}:${s.line}: the record changed on disk (no longer JSON)`);
  }
  if (typeof value !== 'object' || value === null) throw new Error(`${s.file}:${s.line}: the record changed on disk`);
  last = { file: s.file, offset: s.offset, length: s.length, value: value as Record<string, unknown> };
  return last.value;
}

/** The full text of one roll-out (native `response`, verl `output`, TRL `completion`). */
export async function readRolloutText(source: RolloutSource): Promise<string> {
  if (source.length === 0 && source.offset === 0) return readTrlCompletion(source.file, source.line - 1);
  const o = await readRecord(source);
  let text: unknown;
  if (source.item !== undefined) {
    const rs = o.rollouts;
    const item = Array.isArray(rs) ? (rs[source.item] as Record<string, unknown> | undefined) : undefined;
    text = item?.response;
  } else {
    text = 'response' in o ? o.response : o.output;
  }
  if (typeof text !== 'string') throw new Error(`${source.file}:${source.line}: the record changed on disk (no text)`);
  return text;
}
