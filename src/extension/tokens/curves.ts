// The consensus panel's token curves of one group (README "Confidence on the text"): each
// roll-out's record read back (the index keeps only the mean log-prob), its per-position curve, and
// the line saying what the group logs. No 'vscode': the host calls it when a question opens.
import { readRolloutObject, rolloutSourceOf, type GroupEntry } from '../../logs/log-layer';
import type { TokenCurve } from '../../protocol/messages';
import { tokenCurveOf, tokenDataOf, tokenNote, type TokenData } from './confidence';

/** Roll-outs of a group whose curves are drawn. */
export const MAX_CURVES = 256;
/** Bytes of records parsed for them on a question switch (on the host thread). */
export const MAX_CURVE_BYTES = 8 << 20;

/**
 * The first MAX_CURVES roll-outs' curves, reading at most `maxBytes` of records (a group record's
 * line once for all its roll-outs); `decode`: token ids to text (a tokenizer file), when set.
 */
export async function readTokenCurves(e: GroupEntry, decode?: (ids: readonly number[]) => string[], maxBytes = MAX_CURVE_BYTES): Promise<{ rows: TokenCurve[]; note: string | null }> {
  const datas: (TokenData | null)[] = [];
  const rows: TokenCurve[] = [];
  const lines = new Set<string>();
  let bytes = 0;
  let cut = 0;
  for (let i = 0; i < Math.min(e.n, MAX_CURVES); i++) {
    const src = rolloutSourceOf(e, i);
    if (!src) continue; // read from a pipe: nothing on disk to read back
    const line = `${src.file}\0${src.offset}`;
    if (!lines.has(line)) {
      if (bytes + src.length > maxBytes) {
        cut = e.n - i;
        break;
      }
      lines.add(line);
      bytes += src.length;
    }
    const o = await readRolloutObject(src, e.version);
    const d = o ? tokenDataOf(o, decode) : null;
    datas.push(d);
    if (d) rows.push(tokenCurveOf(i, d));
  }
  const over = cut
    ? `Token confidence: ${cut === e.n ? 'the' : `the last ${cut}`} roll-outs\u2019 records are not read here (over ${maxBytes >= 1 << 20 ? `${maxBytes >> 20} MB` : `${maxBytes} bytes`}): open one to see its tokens.`
    : '';
  return { rows, note: [tokenNote(datas), over].filter(Boolean).join(' ') || null };
}
