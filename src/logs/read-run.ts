// readRun: one pass over a run, yielding complete groups in the order of each group's first record.
//
// Completion in a one-shot read: a group record is complete at once; the roll-out records of a verl
// file are complete at the end of that file (verl writes one file per step in one go); native
// roll-out records may be spread over files, so their groups are complete at the end of the run.
// Groups are yielded from the front of the queue as soon as they are complete, so a run of group
// records streams with bounded memory. Roll-out records waiting for their group keep no text: the
// text is read back by byte offset when the group is yielded (stdin keeps texts: it cannot be re-read).
//
// Duplicates: a second group record for an identity (run, step, question_id) already seen, or a
// roll-out record for an identity that came as a group record, is skipped with a warning.
import { createInterface } from 'node:readline';
import { stat } from 'node:fs/promises';
import { dirname, relative } from 'node:path';
import type { Readable } from 'node:stream';
import type { Group, Rollout } from '../engine/types.js';
import { listRunFiles } from './walk.js';
import { readFileOnce, type FileReadResult } from './records.js';
import { JsonlFileParser } from './parse.js';
import { readRolloutText } from './texts.js';
import { groupKey, type GroupKey, type Notice, type NoticeSink, type ParsedRecord } from './types.js';

interface Pending {
  group: Group;
  /** Multi-turn sessions: session → index in group.rollouts and the output number kept there. */
  turns?: Map<string, { at: number; output: number }>;
  fromGroupRecord: boolean;
  complete: boolean;
  verlFile?: string;
  firstAt: string;
}

/** Roll-outs ordered by sample_idx when present (those without keep file order, after the others). */
export function orderRollouts<T extends { sampleIdx?: number | null }>(rs: T[]): T[] {
  if (!rs.some((r) => typeof r.sampleIdx === 'number')) return rs;
  return rs
    .map((r, i) => ({ r, i }))
    .sort((a, b) => (a.r.sampleIdx ?? Infinity) - (b.r.sampleIdx ?? Infinity) || a.i - b.i)
    .map((x) => x.r);
}

/** Modal size of a list of sizes (ties: the larger). */
export function modalSize(sizes: Iterable<number>): number | undefined {
  const h = new Map<number, number>();
  for (const s of sizes) h.set(s, (h.get(s) ?? 0) + 1);
  let best: number | undefined;
  let bestN = 0;
  for (const [s, n] of h) if (n > bestN || (n === bestN && best !== undefined && s > best)) [best, bestN] = [s, n];
  return best;
}

export function describeGroup(g: { run?: string; step: number; questionId: string }): string {
  return `${g.run ? g.run + ' ' : ''}step ${g.step} question ${g.questionId}`;
}

class Accumulator {
  private pending = new Map<GroupKey, Pending>();
  private done = new Map<GroupKey, string>();
  /** verl groups still open, by file (they complete at the end of their file). */
  private verlOpen = new Map<string, Pending[]>();
  /** Sizes of groups built from roll-out records (for the modal-size warning). */
  private rolloutGroupSizes: Array<{ key: GroupKey; label: string; n: number; at: string; stream: string }> = [];
  constructor(
    private readonly onNotice: NoticeSink,
    private readonly keepText: boolean,
    private readonly ignoreTruth = false,
  ) {}

  add(rec: ParsedRecord, verl: boolean): void {
    if (this.ignoreTruth) {
      rec.groundTruth = null;
      delete rec.groundTruthForms;
    }
    const key = groupKey(rec.run, rec.step, rec.questionId);
    const at = `${rec.source.file}:${rec.source.line}`;
    const prev = this.pending.get(key);
    const firstAt = prev?.firstAt ?? this.done.get(key);
    if (rec.kind === 'group') {
      // a W&B table is re-logged whole: an earlier file's rows come again, silently skipped
      if (firstAt !== undefined && /\.table\.json$/i.test(rec.source.file) && !firstAt.startsWith(rec.source.file + ':')) return;
      if (firstAt !== undefined) {
        this.onNotice({ level: 'warning', message: `${at}: duplicate group ${describeGroup(rec)} (first at ${firstAt}); skipped`, file: rec.source.file, line: rec.source.line });
        return;
      }
      const { kind: _k, source: src, ...g } = rec;
      for (let i = 0; i < g.rollouts.length; i++) if (!g.rollouts[i].source) g.rollouts[i].source = { ...src, item: i } as Rollout['source'];
      if (this.ignoreTruth) g.groundTruth = null;
      for (const k of Object.keys(g) as Array<keyof typeof g>) if (g[k] === undefined) delete g[k];
      this.pending.set(key, { group: g, fromGroupRecord: true, complete: true, firstAt: at });
      return;
    }
    if (prev === undefined && firstAt !== undefined) {
      this.onNotice({ level: 'warning', message: `${at}: roll-out record for ${describeGroup(rec)}, which is already complete (first at ${firstAt}); skipped`, file: rec.source.file, line: rec.source.line });
      return;
    }
    if (prev?.fromGroupRecord) {
      this.onNotice({ level: 'warning', message: `${at}: roll-out record for ${describeGroup(rec)}, which came as a group record (at ${firstAt}); skipped`, file: rec.source.file, line: rec.source.line });
      return;
    }
    const r: Rollout = rec.rollout;
    if (!this.keepText) r.response = '';
    if (prev && rec.turn) {
      const t = (prev.turns ??= new Map()).get(rec.turn.session);
      if (t) {
        // a later output of the same session replaces the earlier one: only the final output votes
        if (rec.turn.output > t.output) {
          prev.group.rollouts[t.at] = r;
          t.output = rec.turn.output;
        }
        return;
      }
      prev.turns.set(rec.turn.session, { at: prev.group.rollouts.length, output: rec.turn.output });
    }
    if (prev) {
      prev.group.rollouts.push(r);
      if (prev.group.prompt === undefined && rec.prompt !== undefined) prev.group.prompt = rec.prompt;
      if ((prev.group.groundTruth ?? null) === null && rec.groundTruth != null) prev.group.groundTruth = rec.groundTruth;
      if (verl && prev.verlFile !== rec.source.file) {
        prev.verlFile = rec.source.file;
        this.openVerl(prev);
      }
    } else {
      const g: Group = { run: rec.run, step: rec.step, questionId: rec.questionId, rollouts: [r] };
      if (rec.prompt !== undefined) g.prompt = rec.prompt;
      if (rec.groundTruth != null) g.groundTruth = rec.groundTruth;
      if (rec.groundTruthForms) g.groundTruthForms = rec.groundTruthForms;
      if (rec.stream) g.stream = rec.stream;
      if (rec.loggedOperator) g.loggedOperator = rec.loggedOperator;
      if (g.run === undefined) delete g.run;
      const p: Pending = { group: g, fromGroupRecord: false, complete: false, firstAt: at, verlFile: verl ? rec.source.file : undefined };
      if (rec.turn) p.turns = new Map([[rec.turn.session, { at: 0, output: rec.turn.output }]]);
      this.pending.set(key, p);
      if (verl) this.openVerl(p);
    }
  }

  private openVerl(p: Pending): void {
    const list = this.verlOpen.get(p.verlFile!);
    if (list) list.push(p);
    else this.verlOpen.set(p.verlFile!, [p]);
  }

  endOfFile(file: string): void {
    for (const p of this.verlOpen.get(file) ?? []) if (p.verlFile === file) p.complete = true;
    this.verlOpen.delete(file);
  }

  endOfRun(): void {
    for (const p of this.pending.values()) p.complete = true;
  }

  async *flush(): AsyncGenerator<Group> {
    for (const [key, p] of this.pending) {
      if (!p.complete) return;
      this.pending.delete(key);
      this.done.set(key, p.firstAt);
      const g = p.group;
      if (g.run === undefined) delete g.run;
      if (!p.fromGroupRecord) {
        g.rollouts = orderRollouts(g.rollouts);
        if (!this.keepText) g.rollouts = await this.loadTexts(g);
        if (p.verlFile) this.rolloutGroupSizes.push({ key, label: describeGroup(g), n: g.rollouts.length, at: p.firstAt, stream: streamName(g) });
      } else if (g.rollouts.length === 0) {
        this.onNotice({ level: 'warning', message: `${p.firstAt}: ${describeGroup(g)} has no roll-outs ("rollouts": []); skipped`, file: p.firstAt.slice(0, p.firstAt.lastIndexOf(':')), line: Number(p.firstAt.slice(p.firstAt.lastIndexOf(':') + 1)) });
      }
      if (g.rollouts.length) yield g;
    }
  }

  private async loadTexts(g: Group): Promise<Rollout[]> {
    const out: Rollout[] = [];
    for (const r of g.rollouts) {
      if (!r.source) continue;
      try {
        r.response = await readRolloutText(r.source);
        out.push(r);
      } catch (err) {
        this.onNotice({ level: 'error', message: `${(err as Error).message}; roll-out dropped from ${describeGroup(g)}`, file: r.source.file, line: r.source.line });
      }
    }
    return out;
  }

  /**
   * Warns about groups (built from per-file roll-out lines) whose size differs from the usual size
   * of their stream: each stream (run folder, training or validation) has its own usual size.
   */
  sizeWarnings(): void {
    const byStream = new Map<string, typeof this.rolloutGroupSizes>();
    for (const s of this.rolloutGroupSizes) {
      const list = byStream.get(s.stream);
      if (list) list.push(s);
      else byStream.set(s.stream, [s]);
    }
    let shown = 0;
    let total = 0;
    for (const list of byStream.values()) {
      const modal = modalSize(list.map((s) => s.n));
      if (modal === undefined) continue;
      for (const s of list) {
        if (s.n === modal) continue;
        total++;
        if (shown++ >= 10) continue;
        const file = s.at.slice(0, s.at.lastIndexOf(':'));
        const why = s.n > modal && s.n % modal === 0 ? ' (the prompt is probably repeated within the step: its copies are merged into one group)' : '';
        this.onNotice({ level: 'warning', message: `${s.at}: ${s.label} has ${s.n} roll-outs; the run's usual group size is ${modal}${why}`, file, line: Number(s.at.slice(s.at.lastIndexOf(':') + 1)) });
      }
    }
    if (total > 10) this.onNotice({ level: 'warning', message: `${total} groups in all differ from the usual group size of their stream` });
  }
}

export interface ReadRunOptions {
  /** The stream read for path '-' (default process.stdin). */
  stdin?: Readable;
  /** 'ignore': logged ground truth is dropped as it is read (a TTRL pseudo-label in `gts`, say). Default 'auto'. */
  groundTruth?: 'auto' | 'ignore';
  /** Filled while reading: lines read and skipped (the command's exit code), bytes (its progress line). */
  stats?: ReadStats;
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

/** A group's stream: its run folder and whether it is a validation dump (each has its own usual size). */
export function streamName(g: { run?: string; stream?: string }): string {
  return `${g.run ?? ''}\0${g.stream ?? 'train'}`;
}

/** Sums up the files of a run folder skipped because they are not logs (one line, never per file). */
export function notLogSummary(root: string, files: string[]): Notice | undefined {
  if (!files.length) return undefined;
  const names = files.slice(0, 4).map((f) => relative(root, f) || f);
  return { level: 'info', message: `${root}: ${files.length} file${files.length > 1 ? 's' : ''} that ${files.length > 1 ? 'are' : 'is'} not logs skipped (${names.join(', ')}${files.length > 4 ? ', …' : ''})`, file: root };
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
  let st;
  try {
    st = await stat(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(code === 'ENOENT' ? `${path}: no such file or folder` : `${path}: cannot read (${code ?? (err as Error).message})`);
  }
  const root = st.isDirectory() ? path : dirname(path);
  const files = await listRunFiles(path, onNotice);
  if (st.isDirectory() && files.length === 0) onNotice({ level: 'error', message: `${path}: no log files in this folder`, file: path });
  const acc = new Accumulator(onNotice, false, opts.groundTruth === 'ignore');
  const runOnce = new Set<string>();
  const notLogs: string[] = [];
  const stats = opts.stats;
  if (stats) for (const f of files) stats.totalBytes += await stat(f).then((s) => s.size, () => 0);
  for (const file of files) {
    const res: Partial<FileReadResult> = {};
    const before = stats?.bytes ?? 0;
    try {
      for await (const batch of readFileOnce(root, file, onNotice, res, runOnce, st.isDirectory())) {
        const perFile = res.format === 'verl' || res.format === 'nemo-rl';
        for (const rec of batch) acc.add(rec, perFile);
        if (stats) stats.bytes = before + (res.consumed ?? 0);
        yield* acc.flush();
      }
    } catch (err) {
      // one unreadable file never loses the run: name it, keep everything else
      onNotice({ level: 'error', message: `${file}: ${(err as Error).message}; skipped`, file });
    }
    if (stats) {
      stats.bytes = before + (res.size ?? 0);
      stats.lines += res.lines ?? 0;
      stats.skipped += res.skipped ?? 0;
    }
    if (res.notLog) notLogs.push(file);
    acc.endOfFile(file);
    yield* acc.flush();
  }
  const summary = notLogSummary(path, notLogs);
  if (summary) onNotice(summary);
  acc.endOfRun();
  yield* acc.flush();
  acc.sizeWarnings();
}

async function* readStdin(input: Readable, onNotice: NoticeSink, ignoreTruth: boolean, stats?: ReadStats): AsyncGenerator<Group> {
  const parser = new JsonlFileParser('.', '<stdin>', onNotice, 'native');
  const acc = new Accumulator(onNotice, true, ignoreTruth);
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
      acc.add(rec, false);
      yield* acc.flush();
    }
  }
  parser.finish();
  if (stats) {
    stats.lines += parser.lines;
    stats.skipped += parser.skipped;
  }
  acc.endOfRun();
  yield* acc.flush();
  acc.sizeWarnings();
}
