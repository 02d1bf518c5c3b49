// A Hugging Face `tokenizer.json` read for one thing: each token id's text, so that token ids a log
// holds beside per-token log-probs (NeMo RL's `token_ids`) can be laid on the roll-out's text
// (README "Confidence on the text"; the setting `consensusLens.tokenizerFile`). Pure: no 'vscode'.
//
// What is decoded: the vocabulary (`model.vocab`: an object token → id, or Unigram's [token, score]
// list) and `added_tokens` (special ones decode to "", as the trainers decode completions). Byte-
// level tokenizers (GPT-2, Llama 3, Qwen: a `ByteLevel` decoder) spell bytes as characters, mapped
// back to bytes; SentencePiece-style ones (a `Metaspace` decoder, or `Replace` of "▁") spell a space
// "▁" and a byte "<0x0A>". A token that is part of a UTF-8 character gets "" and the character goes
// on the token that completes it; the first token's leading space is dropped when the decoder
// strips it (Metaspace, or a `Strip` after it). Other decoders: the tokens as written.

/** GPT-2's byte ↔ character map (bytes_to_unicode): printable bytes stand for themselves. */
function byteDecoder(): Map<string, number> {
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++)
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  return new Map(bs.map((b, i) => [String.fromCharCode(cs[i]), b]));
}

const utf8 = new TextDecoder('utf-8');
const enc = new TextEncoder();

/** Whether `bytes` ends inside a UTF-8 character (its lead byte seen, not all its continuation bytes). */
function endsMidCharacter(bytes: readonly number[]): boolean {
  for (let k = 1; k <= Math.min(4, bytes.length); k++) {
    const b = bytes[bytes.length - k];
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > k;
  }
  return false;
}

export interface TokenTexts {
  /** Each id's text, one string per id; laid end to end they are the decoded sequence. */
  decode(ids: readonly number[]): string[];
  size: number;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function decoderTypes(d: unknown, out: Obj[] = []): Obj[] {
  if (!isObj(d)) return out;
  if (d.type === 'Sequence' && Array.isArray(d.decoders)) for (const x of d.decoders) decoderTypes(x, out);
  else out.push(d);
  return out;
}

/** The token texts of a parsed tokenizer.json; throws naming what is missing. */
export function tokenTexts(json: unknown): TokenTexts {
  if (!isObj(json) || !isObj(json.model)) throw new Error('not a tokenizer.json (no "model")');
  const pieces: (string | undefined)[] = [];
  const vocab = json.model.vocab;
  if (isObj(vocab)) {
    for (const [tok, id] of Object.entries(vocab)) if (typeof id === 'number' && Number.isInteger(id) && id >= 0) pieces[id] = tok;
  } else if (Array.isArray(vocab)) {
    vocab.forEach((e, id) => Array.isArray(e) && typeof e[0] === 'string' && (pieces[id] = e[0]));
  } else throw new Error('not a tokenizer.json (no "model.vocab")');
  const special = new Set<number>();
  const added = new Map<number, string>();
  for (const a of Array.isArray(json.added_tokens) ? json.added_tokens : []) {
    if (!isObj(a) || typeof a.id !== 'number' || typeof a.content !== 'string') continue;
    if (a.special === true) special.add(a.id);
    else added.set(a.id, a.content);
  }
  const decs = decoderTypes(json.decoder);
  const byteLevel = decs.some((d) => d.type === 'ByteLevel');
  const metaspace = decs.some((d) => d.type === 'Metaspace' || (d.type === 'Replace' && isObj(d.pattern) && d.pattern.String === '\u2581'));
  const stripsFirst = decs.some((d) => d.type === 'Metaspace' || (d.type === 'Strip' && Number(d.start) > 0));
  const bytesOf = byteDecoder();

  /** The bytes a vocabulary piece stands for. */
  const bytes = (id: number): number[] => {
    if (special.has(id)) return [];
    const a = added.get(id);
    if (a !== undefined) return [...enc.encode(a)];
    const p = pieces[id];
    if (p === undefined) return [];
    if (byteLevel) return [...p].map((c) => bytesOf.get(c) ?? enc.encode(c)[0]);
    if (metaspace) {
      const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(p);
      if (m) return [parseInt(m[1], 16)];
      return [...enc.encode(p.replace(/\u2581/g, ' '))];
    }
    return [...enc.encode(p)];
  };

  return {
    size: pieces.length,
    decode(ids) {
      const out: string[] = [];
      let pending: number[] = [];
      let held = 0;
      let first = true;
      for (const id of ids) {
        pending.push(...bytes(id));
        held++;
        if (endsMidCharacter(pending) && held < 4) {
          out.push('');
          continue;
        }
        let s = utf8.decode(Uint8Array.from(pending));
        if (stripsFirst && first && s.startsWith(' ')) s = s.slice(1);
        if (s) first = false;
        out.push(s);
        pending = [];
        held = 0;
      }
      if (pending.length) out[out.length - 1] = utf8.decode(Uint8Array.from(pending));
      return out;
    },
  };
}
