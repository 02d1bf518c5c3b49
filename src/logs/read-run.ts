// readRun: one pass over a run, yielding complete groups in the order of each group's first record.
//
// Groups are assembled by the one assembler (assemble.ts) with the 'one-shot' completion policy:
// a group record is complete at once, the roll-out records of a per-step file (verl, NeMo RL) at the
// end of that file, any other group at the end of the run. Groups are handed out from the front of
// the queue as soon as they are complete, so a run of group records streams with bounded memory.
// Texts: a group record's texts are kept from its line until the group is handed out; roll-out
// records waiting for their group keep no text, it is read back by byte offset when the group is
// handed out (stdin keeps texts: it cannot be re-read).
import { createInterface } from 'node:readline';
import { errnoCode, errorMessage } from '../util/errors';
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import type { Group } from '../engine';
import { listRunFiles } from './walk.js';
import { readFileOnce, type FileReadResult } from './records.js';
import { JsonlFileParser } from './parse.js';
import { readRolloutText } from './texts.js';
import { Change, GroupAssembler } from './assemble.js';
import { describeGroup, notLogSummary } from './describe.js';
import { entryToGroup, rolloutsOf, type GroupEntry } from './entries.js';
import { groupKey, type GroupKey, type LogFormat, type Notice, type NoticeSink, type ParsedRecord, type RolloutSource } from './log-types.js';
import { tableRoot } from './join.js';

export { describeGroup, modalSize, notLogSummary } from './describe.js';
export { orderRollouts } from './entries.js';

export interface ReadRunOptions {
  /** The stream read for path '-' (default process.stdin). */
  stdin?: Readable;
  /** 'ignore': logged ground truth is dropped as it is read (a TTRL pseudo-label in `gts`, say). Default 'auto'. */
  groundTruth?: 'auto' | 'use' | 'ignore';
  /** Filled while reading: lines read and skipped (the command's exit code), bytes (its progress line). */
  stats?: ReadStats;
  /** Told where each file's read stopped (the persisted cache keeps it, to read an appended file on from there). */
  onFileRead?: (s: FileReadState) => void;
  /** The run's files as an earlier stage listed them (src/logs/cache/cache-check.ts): not listed again; the listing's notices are given here. */
  listed?: { files: string[]; notices: Notice[] };
}

/** Where the one-shot read of a file stopped: after the last complete line (`consumed`), and the format it found. */
export interface FileReadState {
  file: string;
  consumed: number;
  nextLine: number;
  format?: LogFormat;
}

export interface ReadStats {
  /** Non-blank JSON Lines lines read, and those skipped as malformed or rejected. */
  lines: number;
  skipped: number;
  /** Bytes of the run's files read so far, and in all (0 for standard input). */
  bytes: number;
  totalBytes: number;
}

export const emptyReadStats = (): ReadStats => ({ lines: 0, skipped: 0, bytes: 0, totalBytes: 0 });

/** The index entry each handed-out group was built from (the persisted cache keeps it). */
const entries = new WeakMap<Group, GroupEntry>();

/** The assembler's entry of a group readRun handed out (undefined for any other group). */
export function entryOfGroup(g: Group): GroupEntry | undefined {
  return entries.get(g);
}

const srcId = (s: { file: string; line: number; item?: number }): string => `${s.line}\0${s.item ?? -1}\0${s.file}`;

/** The one-shot reader's side of the assembler: texts at hand, and handing complete groups out in order. */
class OneShot {
  readonly asm: GroupAssembler;
  /** Texts read with their record, by group, until the group is handed out. */
  private readonly texts = new Map<GroupKey, Map<string, string>>();
  readonly ch = new Change();

  constructor(
    private readonly onNotice: NoticeSink,
    ignoreTruth: boolean,
    private readonly keepRolloutTexts: boolean,
  ) {
    this.asm = new GroupAssembler({ policy: 'one-shot', onNotice, ignoreTruth });
  }

  add(rec: ParsedRecord, format: LogFormat): void {
    const e = this.asm.add(rec, format, this.ch);
    if (!e) return;
    if (rec.kind === 'group') {
      const m = new Map<string, string>();
      rec.rollouts.forEach((r, i) => m.set(srcId((r.source as RolloutSource | undefined) ?? { ...rec.source, item: i }), r.response ?? ''));
      this.texts.set(e.key, m);
    } else if (this.keepRolloutTexts) {
      let m = this.texts.get(e.key);
      if (!m) this.texts.set(e.key, (m = new Map()));
      m.set(srcId(rec.source), rec.rollout.response ?? '');
    }
  }

  /** Hands out the complete groups at the front of the queue (first-record order). */
  async *flush(): AsyncGenerator<Group> {
    this.ch.completed.clear();
    this.ch.added.clear();
    this.ch.changed.clear();
    for (const e of this.asm.entries.values()) {
      if (!e.complete) return;
      this.asm.release(e.key);
      const held = this.texts.get(e.key);
      this.texts.delete(e.key);
      const rollouts = rolloutsOf(e);
      const texts: string[] = [];
      const kept: typeof rollouts = [];
      for (const r of rollouts) {
        let t = held?.get(srcId(r.source));
        if (t === undefined) {
          try {
            t = await readRolloutText(r.source);
          } catch (err) {
            this.onNotice({ level: 'error', message: `${errorMessage(err)}; roll-out dropped from ${describeGroup(e)}`, file: r.source.file, line: r.source.line });
            continue;
          }
        }
        texts.push(t);
        kept.push(r);
      }
      if (!kept.length) continue;
      const g = entryToGroup(e, texts, kept);
      if (kept.length === rollouts.length) entries.set(g, e);
      yield g;
    }
  }
}

/**
 * Reads a run (folder, file, or '-' for stdin native JSONL) once; yields complete groups in the
 * order of each group's first record. Throws only when PATH itself cannot be read; every other
 * problem is a Notice (error-level notices mean that something was skipped).
 */
export async function* readRun(path: string, onNotice: NoticeSink, opts: ReadRunOptions = {}): AsyncGenerator<Group> {
  if (path === '-') {
    yield* readStdin(opts.stdin ?? process.stdin, onNotice, opts.groundTruth === 'ignore', opts.stats);
    return;
  }
  let st: Stats;
  try {
    st = await stat(path);
  } catch (err) {
    const code = errnoCode(err);
    throw new Error(code === 'ENOENT' ? `${path}: no such file or folder` : `${path}: cannot read (${code ?? errorMessage(err)})`);
  }
  const root = st.isDirectory() ? path : dirname(path);
  // TRL's completions tables after the other files: a table group joins the consensus_lens.trl
  // log's group of the same step and prompt (join.ts), which must not have been handed out yet.
  let listed: string[];
  if (opts.listed) {
    for (const n of opts.listed.notices) onNotice(n);
    listed = opts.listed.files;
  } else listed = await listRunFiles(path, onNotice);
  const files = [...listed.filter((f) => tableRoot(f) === undefined), ...listed.filter((f) => tableRoot(f) !== undefined)];
  if (st.isDirectory() && files.length === 0) onNotice({ level: 'error', message: `${path}: no log files in this folder`, file: path });
  const one = new OneShot(onNotice, opts.groundTruth === 'ignore', false);
  const runOnce = new Set<string>();
  const notLogs: string[] = [];
  const stats = opts.stats;
  if (stats) for (const f of files) stats.totalBytes += await stat(f).then((s) => s.size, () => 0);
  for (const file of files) {
    const res: Partial<FileReadResult> = {};
    const before = stats?.bytes ?? 0;
    try {
      for await (const batch of readFileOnce(root, file, onNotice, res, runOnce, st.isDirectory())) {
        for (const rec of batch) one.add(rec, res.format ?? 'native');
        if (stats) stats.bytes = before + (res.consumed ?? 0);
        yield* one.flush();
      }
    } catch (err) {
      // one unreadable file never loses the run: name it, keep everything else
      onNotice({ level: 'error', message: `${file}: ${errorMessage(err)}; skipped`, file });
    }
    if (stats) {
      stats.bytes = before + (res.size ?? 0);
      stats.lines += res.lines ?? 0;
      stats.skipped += res.skipped ?? 0;
    }
    if (res.notLog) notLogs.push(file);
    opts.onFileRead?.({ file, consumed: res.consumed ?? 0, nextLine: res.nextLine ?? 1, format: res.nextLine !== undefined ? res.format : undefined });
    one.asm.endOfFile(file, one.ch);
    yield* one.flush();
  }
  const summary = notLogSummary(path, notLogs);
  if (summary) onNotice(summary);
  one.asm.endOfInput(one.ch);
  yield* one.flush();
  one.asm.endOfInitialRead();
}

/**
 * The groups of the lines appended to `file`, the last file of the run at `path`, since an earlier
 * read stopped at `from` (line `line`), in that read's format: what readRun gives after the groups
 * of the earlier read, when the new lines hold only new groups (the caller checks: `appendedKeys`).
 */
export async function* readAppended(path: string, file: string, from: { consumed: number; nextLine: number; format: LogFormat }, onNotice: NoticeSink, opts: ReadRunOptions = {}): AsyncGenerator<Group> {
  const st = await stat(path);
  const root = st.isDirectory() ? path : dirname(path);
  const one = new OneShot(onNotice, opts.groundTruth === 'ignore', false);
  const res: Partial<FileReadResult> = {};
  const stats = opts.stats;
  const size = await stat(file).then((s) => s.size, () => from.consumed);
  if (stats) stats.totalBytes += size - from.consumed;
  const before = stats?.bytes ?? 0;
  try {
    for await (const batch of readFileOnce(root, file, onNotice, res, new Set(), st.isDirectory(), { offset: from.consumed, line: from.nextLine, format: from.format })) {
      for (const rec of batch) one.add(rec, res.format ?? from.format);
      if (stats) stats.bytes = before + (res.consumed ?? from.consumed) - from.consumed;
      yield* one.flush();
    }
  } catch (err) {
    onNotice({ level: 'error', message: `${file}: ${errorMessage(err)}; skipped`, file });
  }
  if (stats) {
    stats.bytes = before + size - from.consumed;
    stats.lines += res.lines ?? 0;
    stats.skipped += res.skipped ?? 0;
  }
  opts.onFileRead?.({ file, consumed: res.consumed ?? from.consumed, nextLine: res.nextLine ?? from.nextLine, format: from.format });
  one.asm.endOfFile(file, one.ch);
  yield* one.flush();
  one.asm.endOfInput(one.ch);
  yield* one.flush();
  one.asm.endOfInitialRead();
}

/**
 * The group keys the lines appended to `file` since `from` name (undefined when a line is not a
 * group record or the file cannot be read): a first, silent pass that decides whether the run's
 * cache can be extended with them (only new groups in group records) or the run must be read again.
 */
export async function appendedKeys(path: string, file: string, from: { consumed: number; nextLine: number; format: LogFormat }): Promise<GroupKey[] | undefined> {
  const st = await stat(path);
  const root = st.isDirectory() ? path : dirname(path);
  const keys: GroupKey[] = [];
  let error = false;
  for await (const batch of readFileOnce(root, file, (n) => void (error ||= n.level === 'error'), {}, new Set(), st.isDirectory(), { offset: from.consumed, line: from.nextLine, format: from.format })) {
    for (const rec of batch) {
      if (rec.kind !== 'group') return undefined;
      keys.push(groupKey(rec.run, rec.step, rec.questionId));
    }
  }
  return error ? undefined : keys;
}

async function* readStdin(input: Readable, onNotice: NoticeSink, ignoreTruth: boolean, stats?: ReadStats): AsyncGenerator<Group> {
  const parser = new JsonlFileParser('.', '<stdin>', onNotice, 'native');
  const one = new OneShot(onNotice, ignoreTruth, true);
  const rl = createInterface({ input, crlfDelay: Infinity });
  let offset = 0;
  let line = 0;
  for await (const text of rl) {
    line++;
    const length = Buffer.byteLength(text);
    const rec = parser.line({ text, offset, length, line, terminated: true, badUtf8: text.includes('\uFFFD'), end: offset + length + 1 });
    offset += length + 1;
    if (stats) stats.bytes = offset;
    if (rec) {
      one.add(rec, 'native');
      yield* one.flush();
    }
  }
  parser.finish();
  if (stats) {
    stats.lines += parser.lines;
    stats.skipped += parser.skipped;
  }
  one.asm.endOfInput(one.ch);
  yield* one.flush();
  one.asm.endOfInitialRead();
}
