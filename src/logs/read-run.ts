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
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import type { Group, Rollout } from '../engine/types.js';
import { listRunFiles } from './walk.js';
import { readFileOnce, type FileReadResult } from './records.js';
import { JsonlFileParser } from './parse.js';
import { readRolloutText } from './texts.js';
import { groupKey, type GroupKey, type NoticeSink, type ParsedRecord } from './types.js';

interface Pending {
  group: Group;
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
  private rolloutGroupSizes: Array<{ key: GroupKey; label: string; n: number; at: string }> = [];
  constructor(
    private readonly onNotice: NoticeSink,
    private readonly keepText: boolean,
  ) {}

  add(rec: ParsedRecord, verl: boolean): void {
    const key = groupKey(rec.run, rec.step, rec.questionId);
    const at = `${rec.source.file}:${rec.source.line}`;
    const prev = this.pending.get(key);
    const firstAt = prev?.firstAt ?? this.done.get(key);
    if (rec.kind === 'group') {
      if (firstAt !== undefined) {
        this.onNotice({ level: 'warning', message: `${at}: duplicate group ${describeGroup(rec)} (first at ${firstAt}); skipped`, file: rec.source.file, line: rec.source.line });
        return;
      }
      const { kind: _k, source: src, ...g } = rec;
      for (let i = 0; i < g.rollouts.length; i++) if (!g.rollouts[i].source) g.rollouts[i].source = { ...src, item: i } as Rollout['source'];
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
      if (g.run === undefined) delete g.run;
      const p: Pending = { group: g, fromGroupRecord: false, complete: false, firstAt: at, verlFile: verl ? rec.source.file : undefined };
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
        if (p.verlFile) this.rolloutGroupSizes.push({ key, label: describeGroup(g), n: g.rollouts.length, at: p.firstAt });
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

  /** Warns about verl groups whose size differs from the run's modal size. */
  sizeWarnings(): void {
    const modal = modalSize(this.rolloutGroupSizes.map((s) => s.n));
    if (modal === undefined) return;
    const odd = this.rolloutGroupSizes.filter((s) => s.n !== modal);
    for (const s of odd.slice(0, 10)) {
      const file = s.at.slice(0, s.at.lastIndexOf(':'));
      this.onNotice({ level: 'warning', message: `${s.at}: ${s.label} has ${s.n} roll-outs; the run's usual group size is ${modal}`, file, line: Number(s.at.slice(s.at.lastIndexOf(':') + 1)) });
    }
    if (odd.length > 10) this.onNotice({ level: 'warning', message: `${odd.length} groups in all differ from the run's usual group size ${modal}` });
  }
}

export interface ReadRunOptions {
  /** The stream read for path '-' (default process.stdin). */
  stdin?: Readable;
}

/**
 * Reads a run (folder, file, or '-' for stdin native JSONL) once; yields complete groups in the
 * order of each group's first record. Throws only when PATH itself cannot be read; every other
 * problem is a Notice (error-level notices mean that something was skipped).
 */
export async function* readRun(path: string, onNotice: NoticeSink, opts: ReadRunOptions = {}): AsyncGenerator<Group> {
  if (path === '-') {
    yield* readStdin(opts.stdin ?? process.stdin, onNotice);
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
  const acc = new Accumulator(onNotice, false);
  const runOnce = new Set<string>();
  for (const file of files) {
    const res: Partial<FileReadResult> = {};
    for await (const batch of readFileOnce(root, file, onNotice, res, runOnce)) {
      const verl = res.format === 'verl';
      for (const rec of batch) acc.add(rec, verl);
      yield* acc.flush();
    }
    acc.endOfFile(file);
    yield* acc.flush();
  }
  acc.endOfRun();
  yield* acc.flush();
  acc.sizeWarnings();
}

async function* readStdin(input: Readable, onNotice: NoticeSink): AsyncGenerator<Group> {
  const parser = new JsonlFileParser('.', '<stdin>', onNotice, 'native');
  const acc = new Accumulator(onNotice, true);
  const rl = createInterface({ input, crlfDelay: Infinity });
  let offset = 0;
  let line = 0;
  for await (const text of rl) {
    line++;
    const length = Buffer.byteLength(text);
    const rec = parser.line({ text, offset, length, line, terminated: true, badUtf8: text.includes('\uFFFD'), end: offset + length + 1 });
    offset += length + 1;
    if (rec) {
      acc.add(rec, false);
      yield* acc.flush();
    }
  }
  parser.finish();
  acc.endOfRun();
  yield* acc.flush();
  acc.sizeWarnings();
}
