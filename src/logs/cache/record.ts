// One group's record in the persisted run cache (run-cache.ts): its prepared features in a fixed
// binary layout, read back as typed-array views of the record's bytes (no per-roll-out object, no
// structured-clone decoding), and its index entry (V8 serialisation), decoded only when the
// group's roll-outs are wanted. A run-wide re-score scans the features of every record and never
// decodes an entry.
//
// Layout (little-endian; a record starts and ends on a multiple of 8 bytes, so every float64
// section is aligned):
//   u32 length of the record (with this header and the padding)
//   u32 FNV-1a hash of the question id (src/util/hash.ts: which thread a re-score gives the group to)
//   u32 bytes of `meta` (UTF-8 JSON), u32 bytes of the entry (V8), u32 n, u32 cosines (float64
//   values, all classes), u32 flags (1: reasoning cosines, 2: health text measures), u32 0
//   float64: confidence[n], cosines[…], repetition[n] (health)
//   int32:   classOf[n], length[n] (health)
//   uint8:   hasConfidence[n], verified[n] (int8), rule[n] (health), truncated[n] (health)
//   meta, entry, zero padding
// `meta` holds the rest: step, question id, ground truth and its forms, each class's answer and
// cosine count, the answers, logged rewards and advantages, outcome checks, and where the group's
// first record is (for a message naming file and line). Classes' members are rebuilt from classOf
// (members ascending, classes ordered by first member: formClasses' order).
import { deserialize, serialize } from 'node:v8';
import type { AnswerClass, Framework, OutcomeCheck, PreparedGroup, RecordSource } from '../../engine';
import type { GroupEntry } from '../entries.js';
import { fnv1a } from '../../engine';

const HEADER = 32;
const HAS_REASONING = 1;
const HAS_TEXT = 2;

interface Meta {
  s: number;
  q: string;
  r?: string;
  st?: 'validation';
  lo?: string;
  fw?: Framework;
  gt: string | null;
  f?: string[];
  ca: string[];
  cl: number[];
  a: (string | null)[];
  lr: (number | null)[];
  la?: (number | null)[];
  oc: OutcomeCheck[];
  cm: number;
  /** PreparedGroup.truthMayBeVote */
  mv?: 1;
  src?: { file: string; line: number };
  /** The label-free operators' inputs (PreparedGroup.selfCertainty … novelty), non-finite values as strings. */
  lf?: LabelFree;
}

type Num = number | string | null;
interface LabelFree {
  sc?: Num[];
  en?: Num[];
  te?: (Num[] | null)[];
  ap?: boolean[];
  nf?: number[];
  nv?: { v: number[]; r: Num[] };
}

// JSON has no NaN or ∞: they are kept as strings, so a refused value stays refused after the cache.
const toJson = (x: number | null): Num => (x === null || Number.isFinite(x) ? x : String(x));
const fromJson = (x: Num): number | null => (typeof x === 'string' ? Number(x) : x);

function labelFreeMeta(p: PreparedGroup): LabelFree | undefined {
  const lf: LabelFree = {};
  if (p.selfCertainty) lf.sc = p.selfCertainty.map(toJson);
  if (p.entropy) lf.en = p.entropy.map(toJson);
  if (p.tokenEntropies) lf.te = p.tokenEntropies.map((t) => (t ? t.map(toJson) : null));
  if (p.confidenceApproximate) lf.ap = p.confidenceApproximate;
  if (p.nonFiniteLogprob) lf.nf = p.nonFiniteLogprob;
  if (p.novelty) lf.nv = { v: Array.from(p.novelty.valid), r: Array.from(p.novelty.raw, toJson) };
  return Object.keys(lf).length ? lf : undefined;
}

function restoreLabelFree(out: PreparedGroup, lf: LabelFree): void {
  if (lf.sc) out.selfCertainty = lf.sc.map(fromJson);
  if (lf.en) out.entropy = lf.en.map(fromJson);
  if (lf.te) out.tokenEntropies = lf.te.map((t) => (t ? t.map((x) => fromJson(x) as number) : null));
  if (lf.ap) out.confidenceApproximate = lf.ap;
  if (lf.nf) out.nonFiniteLogprob = lf.nf;
  if (lf.nv) out.novelty = { valid: Uint8Array.from(lf.nv.v), raw: Float64Array.from(lf.nv.r, (x) => fromJson(x) as number) };
}

/** The prepared features a record gives back: a PreparedGroup without the roll-outs' sources (the entry has them). */
export interface RecordFeatures {
  prepared: PreparedGroup;
  /** Every accepted form of the ground truth (the entry's), for a label's correctness. */
  groundTruthForms?: string[];
  /** Where the group's first record is. */
  firstSource?: { file: string; line: number };
}

const pad8 = (n: number): number => (n + 7) & ~7;

/** The record of a group: its index entry (no version) and its prepared features (with the health measures). */
export function encodeRecord(e: Omit<GroupEntry, 'version'>, p: PreparedGroup): Buffer {
  const n = p.n;
  const text = p.text;
  let cos = 0;
  for (const c of p.cosines) cos += c.length;
  const src = p.sources[0];
  const meta: Meta = { s: p.step, q: p.questionId, gt: p.groundTruth, ca: p.classes.map((c) => c.answer), cl: p.cosines.map((c) => c.length), a: p.answers, lr: p.loggedRewards, oc: p.outcomeChecks, cm: p.confidenceMissing };
  if (p.run !== undefined) meta.r = p.run;
  if (p.stream) meta.st = p.stream;
  if (p.loggedOperator) meta.lo = p.loggedOperator;
  if (p.framework) meta.fw = p.framework;
  if (p.truthMayBeVote) meta.mv = 1;
  if (e.groundTruthForms) meta.f = e.groundTruthForms;
  if (p.loggedAdvantages) meta.la = p.loggedAdvantages;
  if (src) meta.src = { file: src.file, line: src.line };
  const lf = labelFreeMeta(p);
  if (lf) meta.lf = lf;
  const mb = Buffer.from(JSON.stringify(meta), 'utf8');
  const eb = serialize(e);
  const f64 = 8 * (n + cos + (text ? n : 0));
  const i32 = 4 * (n + (text ? n : 0));
  const u8 = n * (text ? 4 : 2);
  const len = pad8(HEADER + f64 + i32 + u8 + mb.length + eb.length);
  const b = Buffer.alloc(len);
  b.writeUInt32LE(len, 0);
  b.writeUInt32LE(fnv1a(p.questionId), 4);
  b.writeUInt32LE(mb.length, 8);
  b.writeUInt32LE(eb.length, 12);
  b.writeUInt32LE(n, 16);
  b.writeUInt32LE(cos, 20);
  b.writeUInt32LE((p.hasReasoning ? HAS_REASONING : 0) | (text ? HAS_TEXT : 0), 24);
  let at = HEADER;
  const put = (a: ArrayBufferView) => {
    const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    b.set(bytes, at);
    at += bytes.length;
  };
  put(p.confidence);
  for (const c of p.cosines) put(c);
  if (text) put(text.repetition);
  put(p.classOf);
  if (text) put(text.length);
  put(p.hasConfidence);
  put(p.verified);
  if (text) {
    put(text.rule);
    put(text.truncated);
  }
  b.set(mb, at);
  b.set(eb, at + mb.length);
  return b;
}

/**
 * The features of the record at `at` in `buf`. `buf` must own its memory for as long as the
 * features are used (they are views of it) and `buf.byteOffset + at` be a multiple of 8.
 */
export function decodeFeatures(buf: Uint8Array, at = 0): RecordFeatures {
  const dv = new DataView(buf.buffer, buf.byteOffset + at);
  const metaLen = dv.getUint32(8, true);
  const n = dv.getUint32(16, true);
  const cos = dv.getUint32(20, true);
  const flags = dv.getUint32(24, true);
  const text = (flags & HAS_TEXT) !== 0;
  const ab = buf.buffer;
  let off = buf.byteOffset + at + HEADER;
  const f64 = (k: number) => {
    const v = new Float64Array(ab, off, k);
    off += 8 * k;
    return v;
  };
  const i32 = (k: number) => {
    const v = new Int32Array(ab, off, k);
    off += 4 * k;
    return v;
  };
  const u8 = (k: number) => {
    const v = new Uint8Array(ab, off, k);
    off += k;
    return v;
  };
  const confidence = f64(n);
  const allCos = f64(cos);
  const repetition = text ? f64(n) : undefined;
  const classOf = i32(n);
  const length = text ? i32(n) : undefined;
  const hasConfidence = u8(n);
  const verified = new Int8Array(ab, off, n);
  off += n;
  const rule = text ? u8(n) : undefined;
  const truncated = text ? u8(n) : undefined;
  const m = JSON.parse(Buffer.from(ab, off, metaLen).toString('utf8')) as Meta;
  const classes: AnswerClass[] = m.ca.map((answer) => ({ answer, members: [] }));
  for (let i = 0; i < n; i++) if (classOf[i] >= 0) classes[classOf[i]].members.push(i);
  const cosines: Float64Array[] = [];
  let c0 = 0;
  for (const k of m.cl) {
    cosines.push(allCos.subarray(c0, c0 + k));
    c0 += k;
  }
  const prepared: PreparedGroup = {
    step: m.s,
    questionId: m.q,
    n,
    answers: m.a,
    classOf,
    classes,
    cosines,
    hasReasoning: (flags & HAS_REASONING) !== 0,
    confidence,
    hasConfidence,
    confidenceMissing: m.cm,
    verified,
    loggedRewards: m.lr,
    outcomeChecks: m.oc,
    groundTruth: m.gt,
    sources: [],
  };
  if (m.r !== undefined) prepared.run = m.r;
  if (m.st) prepared.stream = m.st;
  if (m.lo) prepared.loggedOperator = m.lo;
  if (m.fw) prepared.framework = m.fw;
  if (m.mv) prepared.truthMayBeVote = true;
  if (m.f) prepared.groundTruthForms = m.f;
  if (m.la) prepared.loggedAdvantages = m.la;
  if (text) prepared.text = { length: length!, repetition: repetition!, rule: rule!, truncated: truncated! };
  if (m.lf) restoreLabelFree(prepared, m.lf);
  const out: RecordFeatures = { prepared };
  if (m.f) out.groundTruthForms = m.f;
  if (m.src) out.firstSource = m.src;
  return out;
}

/** The index entry of the record at `at` in `buf` (version 0: versions belong to a process). */
export function decodeEntry(buf: Uint8Array, at = 0): GroupEntry {
  const dv = new DataView(buf.buffer, buf.byteOffset + at);
  const len = dv.getUint32(0, true);
  const metaLen = dv.getUint32(8, true);
  const entryLen = dv.getUint32(12, true);
  const n = dv.getUint32(16, true);
  const cos = dv.getUint32(20, true);
  const text = (dv.getUint32(24, true) & HAS_TEXT) !== 0;
  const start = HEADER + 8 * (n + cos + (text ? n : 0)) + 4 * (n + (text ? n : 0)) + n * (text ? 4 : 2) + metaLen;
  if (start + entryLen > len) throw new Error('cache record shorter than its entry');
  return { ...(deserialize(buf.subarray(at + start, at + start + entryLen)) as Omit<GroupEntry, 'version'>), version: 0 };
}

/** The record's length and question hash from its first 8 bytes. */
export function recordHeader(buf: Uint8Array, at = 0): { length: number; qhash: number } {
  const dv = new DataView(buf.buffer, buf.byteOffset + at, 8);
  return { length: dv.getUint32(0, true), qhash: dv.getUint32(4, true) };
}

export type { RecordSource };
