// Reading a roll-out's text back from disk by its record's byte range (the index never keeps text).
import { readRange } from './lines.js';
import { parseJsonLine } from './json.js';
import { readTrlCompletion } from './trl.js';
import { readTableCell } from './wandb.js';
import { nemoResponse } from './nemo.js';
import { primeRlResponse } from './primerl.js';
import { milesResponse } from './miles.js';
import type { RolloutSource } from './log-types.js';

/**
 * Parsed lines are shared: the roll-outs of a group record share one line, so the last few parsed
 * lines are kept, and concurrent reads of one line (Promise.all over a group) parse it once. The
 * cache (one per thread) is keyed by the group's version as well as the byte range: a file
 * rewritten in place, even to the same length, gives its groups new versions (entries.ts), so no
 * thread can serve a line of the old file. A read without a version is never cached.
 */
const CACHE = 8;
const cache = new Map<string, Record<string, unknown>>();
const inflight = new Map<string, Promise<Record<string, unknown>>>();

function readRecord(s: RolloutSource, version: number | undefined): Promise<Record<string, unknown>> {
  if (version === undefined) return parseRecord(s);
  const key = `${version}\0${s.offset}:${s.length}\0${s.file}`;
  const hit = cache.get(key);
  if (hit) return Promise.resolve(hit);
  let p = inflight.get(key);
  if (!p) {
    p = parseRecord(s).then(
      (v) => {
        inflight.delete(key);
        cache.set(key, v);
        if (cache.size > CACHE) cache.delete(cache.keys().next().value as string);
        return v;
      },
      (err) => {
        inflight.delete(key);
        throw err;
      },
    );
    inflight.set(key, p);
  }
  return p;
}

async function parseRecord(s: RolloutSource): Promise<Record<string, unknown>> {
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
  return value as Record<string, unknown>;
}

/**
 * The full text of one roll-out (native `response`, verl `output`, TRL `completion`, NeMo RL's last
 * `content`, a W&B table cell). `version`: the version of the group it belongs to (entries.ts),
 * which lets the roll-outs of one group record share one read of their line.
 */
export async function readRolloutText(source: RolloutSource, version?: number): Promise<string> {
  if (source.length === 0 && source.offset === 0) {
    if (/\.table\.json$/i.test(source.file)) return readTableCell(source.file, source.line - 1, source.item ?? 0);
    return readTrlCompletion(source.file, source.line - 1);
  }
  const o = await readRecord(source, version);
  let text: unknown;
  if (source.item !== undefined) {
    const rs = o.rollouts;
    const item = Array.isArray(rs) ? (rs[source.item] as Record<string, unknown> | undefined) : undefined;
    text = item?.response;
  } else {
    text = 'response' in o ? o.response : 'output' in o ? o.output : 'output_response' in o ? o.output_response : 'completion' in o ? primeRlResponse(o) : 'sample_index' in o && 'messages' in o ? milesResponse(o) : nemoResponse(o);
  }
  if (typeof text !== 'string') throw new Error(`${source.file}:${source.line}: the record changed on disk (no text)`);
  return text;
}

/**
 * The object one roll-out's fields live in (a group record's `rollouts` item, or the record
 * itself), for what the index does not keep (per-token log-probs and token strings); null for
 * formats read by row (TRL parquet, W&B tables), whose rows hold no per-token data.
 */
export async function readRolloutObject(source: RolloutSource, version?: number): Promise<Record<string, unknown> | null> {
  if (source.length === 0 && source.offset === 0) return null;
  const o = await readRecord(source, version);
  if (source.item === undefined) return o;
  const rs = o.rollouts;
  const item = Array.isArray(rs) ? rs[source.item] : undefined;
  if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new Error(`${source.file}:${source.line}: the record changed on disk (no roll-out ${source.item})`);
  return item as Record<string, unknown>;
}
