// Long file: one set of rules (identity, versions, completion, duplicates, late roll-outs, streams,
// sizes, a saved state put back), each reading the state the others keep; split, they would share
// every map.
//
// The group assembler: the one place where parsed records become groups, for every reader (the
// one-shot `readRun` of score/sweep/report/health, and the followed `RunIndex` of the extension and
// `watch`). It owns a group's identity (key: run, step, question_id), its version (entries.ts) and
// the rules below; the readers only feed it records and say when a file or the input ends.
//
// Completion is the reader's policy, its one parameter:
//   - both: a group record (native `kind: "group"`, a TRL parquet or W&B table group) is complete
//     at once;
//   - 'one-shot' (a whole run read once): roll-out records of per-step files (verl, NeMo RL: one
//     file per step, written in one go) complete at the end of their file; every other group at
//     the end of the input (native roll-out records may be spread over files, one per rank);
//   - 'followed' (files still being written): roll-out records complete when the group reaches
//     the usual size of its stream, when the file that fed it has moved on to a later step (per-
//     step formats: or a later step's file of the same stream has begun), or when it has had no new
//     roll-out for the idle period (RunIndex decides which files are still being written).
// A roll-out for a group that is already complete reopens it (a prompt repeated within a step, a
// late writer): it takes a new version and completes again by the same rules (not by size). Only a
// group already handed out for good by a one-shot read (streamed to the scorer) cannot reopen: the
// roll-out is skipped with a warning naming both places.
// Duplicates: a second group record for an identity, or a roll-out record for an identity that came
// as a group record, is skipped with a warning; a W&B table re-logged whole (each file repeats the
// earlier rows) is skipped silently.
// One run, two logs: a TRL completions-table group joins the consensus_lens.trl log's group of the
// same step and prompt when both are complete (join.ts states the rules).
// Streams: groups of one format, run folder and stream (training or validation) share a usual size
// (`streamOf`). Size warnings: a group of roll-out records of a per-step format whose size differs
// from its stream's usual size is reported; at most 10 one by one, then one line counting the rest.
import { describeGroup, modalSize } from './describe.js';
import { insertOrdered, nextVersion, pack, toRolloutEntry, type GroupEntry } from './entries.js';
import { GroupTable } from './group-table.js';
import { groupKey, type GroupKey, type LogFormat, type NoticeSink, type ParsedRecord, type RolloutSource } from './log-types.js';
import { TableJoin } from './join.js';

export type CompletionPolicy = 'one-shot' | 'followed';

/** Keys touched by one update, by kind (a key can be removed and added in one update: its file was re-read). */
export class Change {
  removed = new Set<GroupKey>();
  added = new Set<GroupKey>();
  completed = new Set<GroupKey>();
  changed = new Set<GroupKey>();
  /** Open groups that received roll-outs: only their size changed (a complete one that does reopens: `changed` when it completes again). */
  grown = new Set<GroupKey>();
  get empty(): boolean {
    return !this.removed.size && !this.added.size && !this.completed.size && !this.changed.size && !this.grown.size;
  }
}

/** The stream of a group: format, run folder, training or validation (each has its own usual size). */
export function streamOf(e: { format: LogFormat; run?: string; stream?: string }): string {
  return `${e.format}\0${e.run ?? ''}\0${e.stream ?? 'train'}`;
}

const perStep = (f: LogFormat): boolean => f === 'verl' || f === 'nemo-rl' || f === 'prime-rl' || f === 'skyrl' || f === 'miles';

/** At most this many size warnings one by one; the rest are counted. */
const SIZE_WARNINGS = 10;

/**
 * The groups a file fed and the latest step it wrote, by their ids in the table (group-table.ts: a
 * huge run's keys as strings, one per group per file, would be megabytes of the host's heap). A
 * restored file's ids stay the sorted array they were restored as (ids are given in order), looked
 * up by bisection; the groups it feeds afterwards go to a set beside it.
 */
class FileGroups {
  private readonly added = new Set<number>();
  constructor(
    private readonly table: GroupTable,
    private readonly saved: Int32Array = new Int32Array(0),
    public maxStep = -1,
  ) {}

  private inSaved(id: number): boolean {
    const a = this.saved;
    let lo = 0;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (a[mid] < id) lo = mid + 1;
      else hi = mid;
    }
    return lo < a.length && a[lo] === id;
  }

  /** The group of id `id` (`GroupTable.idOf`) is one it fed. */
  hasId(id: number): boolean {
    return this.added.has(id) || this.inSaved(id);
  }

  /** A group held in the table fed it. */
  add(key: GroupKey): void {
    const id = this.table.idOf(key);
    if (id >= 0 && !this.hasId(id)) this.added.add(id);
  }

  /** The group held under `key` now is one it fed. */
  has(key: GroupKey): boolean {
    const id = this.table.idOf(key);
    return id >= 0 && this.hasId(id);
  }

  /** The keys of the groups it fed, once each (a key deleted and held again has a new id: the old one is skipped when both are here). */
  *keys(): IterableIterator<GroupKey> {
    for (const ids of [this.saved, this.added]) {
      for (const id of ids) {
        const k = this.table.keyOf(id);
        const now = this.table.idOf(k);
        if (now !== id && now >= 0 && this.hasId(now)) continue;
        yield k;
      }
    }
  }

  list(): GroupKey[] {
    return [...this.keys()];
  }
}

export interface AssemblerOptions {
  policy: CompletionPolicy;
  onNotice: NoticeSink;
  /** Logged ground truth is dropped as it is read. */
  ignoreTruth?: boolean;
  /** The reading order of two files (a followed index keeps its groups in the order of a fresh read). */
  order?: (a: string, b: string) => number;
  /** A cold group's full entry as its head is now (version, completeness; not cold), read back before the assembler changes it (RunIndex.readBack). */
  thaw?: (e: GroupEntry) => GroupEntry;
}

/** A followed assembler's state without its groups (see `GroupAssembler.snapshot`). */
export interface AssemblerState {
  files: Array<[string, GroupKey[], number]>;
  lastUpdate: Array<[GroupKey, number]>;
  sizeHist: Array<[string, Array<[number, number]>]>;
  countedSize: Array<[GroupKey, number]>;
  reopened: GroupKey[];
  streamStep: Array<[string, number]>;
  turns: Array<[GroupKey, Array<[string, number, number]>]>;
  sizeWarned: number;
}

export class GroupAssembler {
  /** Groups held, in first-record order (a cold head as a row of columns: group-table.ts). */
  readonly entries = new GroupTable();
  /** The latest first record of the groups appended (a fresh read's order), and whether one came after a later one (`reorder`). */
  private last?: { file: string; line: number };
  private disordered = false;
  /** One-shot: groups handed out for good → where their first record was. */
  private readonly released = new Map<GroupKey, string>();
  private readonly files = new Map<string, FileGroups>();
  /** Incomplete groups of roll-out records → when they last received one (followed: idleness). */
  readonly lastUpdate = new Map<GroupKey, number>();
  /** Sizes of complete groups per stream: the usual-size rule's data. */
  private readonly sizeHist = new Map<string, Map<number, number>>();
  /**
   * The size each complete group was counted with in `sizeHist`. A cold head (restored, entries.ts)
   * counted with its own size is not in the map: it cannot change without being read back first
   * (`warm`, which puts it in), so its size is the one counted (`counted`). A map entry per group
   * of a huge restored run is megabytes of the host's heap.
   */
  private readonly countedSize = new Map<GroupKey, number>();

  private counted(e: GroupEntry | undefined, key: GroupKey): number | undefined {
    return this.countedSize.get(key) ?? (e?.cold && e.complete ? e.n : undefined);
  }
  /** Groups reopened past the usual size: they complete by idleness or when their file moves on, not by size. */
  private readonly reopened = new Set<GroupKey>();
  /** Latest step seen per stream of per-step files. */
  private readonly streamStep = new Map<string, number>();
  /** Multi-turn sessions per group: session → output number kept. */
  private readonly turns = new Map<GroupKey, Map<string, { output: number; source: RolloutSource }>>();
  /** Completed groups of roll-out records of per-step formats, until the initial read ends (their sizes are judged together). */
  private sizeRecords: Array<{ label: string; n: number; file: string; line: number; stream: string }> | null = [];
  private sizeWarned = 0;
  private sizeOver = 0;

  /** TRL's completions table joined with the consensus_lens.trl log of the same run (join.ts). */
  readonly join: TableJoin;

  constructor(private readonly opts: AssemblerOptions) {
    this.join = new TableJoin(this.entries, opts.onNotice, (key) => this.forget(key), (e) => this.warm(e));
  }

  /**
   * The group with its roll-outs at hand: a cold head (restored from a persisted index) is read
   * back and replaces it, keeping its version (its roll-outs are the saved ones); the caller then
   * changes it and takes a new version.
   */
  warm(e: GroupEntry): GroupEntry {
    if (!e.cold) return e;
    if (!this.opts.thaw) throw new Error(`group ${e.key} is cold and the assembler cannot read it back`);
    const full = this.opts.thaw(e);
    if (e.complete && !this.countedSize.has(e.key)) this.countedSize.set(e.key, e.n);
    this.entries.set(e.key, full);
    return full;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The keys a file fed (groups it created or added roll-outs to). */
  keysOf(file: string): Iterable<GroupKey> {
    return this.files.get(file)?.keys() ?? [];
  }

  private fileGroups(file: string): FileGroups {
    let f = this.files.get(file);
    if (!f) this.files.set(file, (f = new FileGroups(this.entries)));
    return f;
  }

  /** Adds one parsed record of `format`. Returns the group it went into, or undefined when it was skipped. */
  add(rec: ParsedRecord, format: LogFormat, ch: Change, now = Date.now()): GroupEntry | undefined {
    if (this.opts.ignoreTruth) {
      rec.groundTruth = null;
      delete rec.groundTruthForms;
    }
    const key = groupKey(rec.run, rec.step, rec.questionId);
    const file = rec.source.file;
    const at = `${file}:${rec.source.line}`;
    const fg = this.fileGroups(file);
    const followed = this.opts.policy === 'followed';
    if (rec.step > fg.maxStep) {
      if (fg.maxStep >= 0 && followed) {
        // the file moved on to a later step: its earlier roll-out groups are done
        // (every incomplete group is in `lastUpdate`: a walk of those, not of every group the file fed)
        for (const k of [...this.lastUpdate.keys()]) {
          if (!fg.has(k)) continue;
          const e = this.entries.get(k);
          if (e && !e.complete && e.step < rec.step) this.complete(e, ch);
        }
      }
      fg.maxStep = rec.step;
    }
    if (followed && rec.kind === 'rollout' && perStep(format)) {
      // one file per step: a later step's file in the same stream means the earlier steps are written
      const stream = streamOf({ format, run: rec.run, stream: rec.stream });
      const max = this.streamStep.get(stream) ?? -1;
      if (rec.step > max) {
        this.streamStep.set(stream, rec.step);
        if (max >= 0) {
          for (const k of this.lastUpdate.keys()) {
            const e = this.entries.get(k);
            if (e && !e.complete && e.step < rec.step && streamOf(e) === stream) this.complete(e, ch);
          }
        }
      }
    }
    let existing = this.entries.get(key);
    const firstAt = existing ? `${existing.firstSource.file}:${existing.firstSource.line}` : this.released.get(key);
    const warn = (message: string) => this.opts.onNotice({ level: 'warning', message: `${at}: ${message}`, file, line: rec.source.line });
    if (rec.kind === 'group') {
      // a W&B table is re-logged whole: an earlier file's rows come again, silently skipped
      if (firstAt !== undefined && /\.table\.json$/i.test(file) && !firstAt.startsWith(file + ':')) return undefined;
      if (firstAt !== undefined) return void warn(`duplicate group ${describeGroup(rec)} (first at ${firstAt}); skipped`);
      if (rec.rollouts.length === 0) return void warn(`${describeGroup(rec)} has no roll-outs ("rollouts": []); skipped`);
      const e: GroupEntry = {
        key,
        step: rec.step,
        questionId: rec.questionId,
        groundTruth: rec.groundTruth ?? null,
        n: rec.rollouts.length,
        origin: 'group',
        format,
        complete: false,
        version: nextVersion(),
        firstSource: rec.source,
        packed: pack(rec.rollouts, rec.source),
      };
      if (rec.run !== undefined) e.run = rec.run;
      if (rec.prompt !== undefined) e.prompt = rec.prompt;
      if (rec.outcomeChecks) e.outcomeChecks = rec.outcomeChecks;
      if (rec.loggedOperator) e.loggedOperator = rec.loggedOperator;
      if (rec.groundTruthForms) e.groundTruthForms = rec.groundTruthForms;
      if (rec.stream) e.stream = rec.stream;
      if (rec.framework) e.framework = rec.framework;
      this.append(e);
      fg.add(key);
      ch.added.add(key);
      this.complete(e, ch);
      return e;
    }
    if (existing?.origin === 'group' || (!existing && firstAt !== undefined && this.releasedGroupRecord.has(key))) {
      return void warn(`roll-out record for ${describeGroup(rec)}, which came as a group record (at ${firstAt}); skipped`);
    }
    if (!existing && firstAt !== undefined) return void warn(`roll-out record for ${describeGroup(rec)}, which is already complete (first at ${firstAt}); skipped`);
    if (existing?.cold) existing = this.warm(existing);
    const entry = toRolloutEntry(rec.rollout);
    if (existing) fg.add(key); // a new group is added to its file once held (below)
    this.lastUpdate.set(key, now);
    if (existing && rec.turn) {
      const t = this.turns.get(key)?.get(rec.turn.session);
      if (t) {
        // a later output of the same session replaces the earlier one: only the final output votes
        if (rec.turn.output > t.output) {
          const list = existing.list!;
          const i = list.findIndex((r) => r.source === t.source);
          if (i >= 0) list[i] = entry;
          t.output = rec.turn.output;
          t.source = entry.source;
          existing.version = nextVersion();
          if (existing.complete) ch.changed.add(key);
        }
        return existing;
      }
    }
    if (rec.turn) {
      let m = this.turns.get(key);
      if (!m) this.turns.set(key, (m = new Map()));
      m.set(rec.turn.session, { output: rec.turn.output, source: entry.source });
    }
    if (existing) {
      insertOrdered(existing.list!, entry);
      existing.n = existing.list!.length;
      existing.version = nextVersion();
      ch.grown.add(key);
      if (existing.prompt === undefined && rec.prompt !== undefined) existing.prompt = rec.prompt;
      if (existing.groundTruth === null && rec.groundTruth != null) existing.groundTruth = rec.groundTruth;
      if (existing.complete) this.reopen(existing);
      else this.maybeCompleteBySize(existing, ch);
      return existing;
    }
    const e: GroupEntry = {
      key,
      step: rec.step,
      questionId: rec.questionId,
      groundTruth: rec.groundTruth ?? null,
      list: [entry],
      n: 1,
      origin: 'rollouts',
      format,
      complete: false,
      version: nextVersion(),
      firstSource: rec.source,
    };
    if (rec.run !== undefined) e.run = rec.run;
    if (rec.prompt !== undefined) e.prompt = rec.prompt;
    if (rec.groundTruthForms) e.groundTruthForms = rec.groundTruthForms;
    if (rec.stream) e.stream = rec.stream;
    if (rec.framework) e.framework = rec.framework;
    if (rec.loggedOperator) e.loggedOperator = rec.loggedOperator;
    this.append(e);
    fg.add(key);
    ch.added.add(key);
    this.maybeCompleteBySize(e, ch);
    return e;
  }

  /** One-shot: groups released that came as group records (a later roll-out record for them is a different mistake). */
  private readonly releasedGroupRecord = new Set<GroupKey>();

  /** The usual size of a group's stream: the modal size of its complete groups (ties: the larger). */
  expectedSize(e: GroupEntry): number | undefined {
    const h = this.sizeHist.get(streamOf(e));
    if (!h) return undefined;
    let best: number | undefined;
    let bestN = 0;
    for (const [s, n] of h) if (n > bestN || (n === bestN && best !== undefined && s > best)) [best, bestN] = [s, n];
    return best;
  }

  private maybeCompleteBySize(e: GroupEntry, ch: Change): void {
    if (this.opts.policy !== 'followed' || this.reopened.has(e.key)) return;
    const n = this.expectedSize(e);
    if (n !== undefined && e.n >= n) this.complete(e, ch);
  }

  /** A complete group received more roll-outs: open again (its size leaves the histogram), completes again by the same rules. */
  private reopen(e: GroupEntry): void {
    e.complete = false;
    const h = this.sizeHist.get(streamOf(e));
    const was = this.counted(e, e.key);
    if (h && was !== undefined) {
      const c = (h.get(was) ?? 1) - 1;
      if (c > 0) h.set(was, c);
      else h.delete(was);
    }
    this.countedSize.delete(e.key);
    this.reopened.add(e.key);
  }

  complete(e: GroupEntry, ch: Change): void {
    if (e.complete) return;
    e.complete = true;
    this.lastUpdate.delete(e.key);
    const stream = streamOf(e);
    let h = this.sizeHist.get(stream);
    if (!h) this.sizeHist.set(stream, (h = new Map()));
    h.set(e.n, (h.get(e.n) ?? 0) + 1);
    this.countedSize.set(e.key, e.n);
    ch.completed.add(e.key);
    this.join.seen(e, ch);
    if (e.origin === 'rollouts' && perStep(e.format)) {
      const s = e.firstSource;
      if (this.sizeRecords) this.sizeRecords.push({ label: describeGroup(e), n: e.n, file: s.file, line: s.line, stream });
      else {
        const modal = this.expectedSize(e);
        if (modal !== undefined) this.sizeWarning({ label: describeGroup(e), n: e.n, file: s.file, line: s.line }, modal);
      }
    }
  }

  private sizeWarning(s: { label: string; n: number; file: string; line: number }, modal: number): void {
    if (s.n === modal) return;
    if (this.sizeWarned >= SIZE_WARNINGS) {
      this.sizeOver++;
      return;
    }
    this.sizeWarned++;
    const why = s.n > modal && s.n % modal === 0 ? ' (the prompt is probably repeated within the step: its copies are merged into one group)' : '';
    this.opts.onNotice({ level: 'warning', message: `${s.file}:${s.line}: ${s.label} has ${s.n} roll-outs; the run's usual group size is ${modal}${why}`, file: s.file, line: s.line });
  }

  /**
   * The initial read is over: the sizes of the groups completed so far are judged against their
   * stream's modal size, and the warnings past the tenth are counted in one line. Later groups
   * (followed) are judged as they complete; their count past the tenth is given by `sizeSummary`.
   */
  endOfInitialRead(): void {
    const records = this.sizeRecords ?? [];
    this.sizeRecords = null;
    const byStream = new Map<string, typeof records>();
    for (const s of records) {
      const list = byStream.get(s.stream);
      if (list) list.push(s);
      else byStream.set(s.stream, [s]);
    }
    for (const list of byStream.values()) {
      const modal = modalSize(list.map((s) => s.n));
      if (modal !== undefined) for (const s of list) this.sizeWarning(s, modal);
    }
    this.sizeSummary();
  }

  /** One line for the size warnings not shown one by one since the last summary. */
  sizeSummary(): void {
    if (!this.sizeOver) return;
    this.opts.onNotice({ level: 'warning', message: `${this.sizeWarned + this.sizeOver} groups in all differ from the usual group size of their stream (the first ${SIZE_WARNINGS} are listed)` });
    this.sizeWarned += this.sizeOver;
    this.sizeOver = 0;
  }

  /** One-shot: the file ended; its per-step groups (verl, NeMo RL: one file per step) are complete. */
  endOfFile(file: string, ch: Change): void {
    for (const k of this.keysOf(file)) {
      const e = this.entries.get(k);
      if (e && !e.complete && perStep(e.format)) this.complete(e, ch);
    }
    // a one-shot read never goes back to a file: its list of groups is not needed any more
    this.files.delete(file);
  }

  /** The input ended (one-shot, or a static index): every group is complete. */
  endOfInput(ch: Change): void {
    for (const e of this.entries.values()) if (!e.complete) this.complete(e, ch);
  }

  /**
   * Followed: completes the groups idle for `idleMs`. Groups fed by a file in `writing` (it ends
   * mid-line) wait for the writer; a group smaller than its stream's usual size fed by a file in
   * `recent` (modified within `underSizeMs`) waits that long (a writer pausing between lines).
   */
  completeIdle(ch: Change, now: number, idleMs: number, writing: Iterable<string>, recent: Iterable<string>, underSizeMs: number): void {
    const files = (fs: Iterable<string>) => [...fs].map((f) => this.files.get(f)).filter((g): g is FileGroups => g !== undefined);
    const wait = files(writing);
    const fresh = files(recent);
    for (const [key, t] of [...this.lastUpdate]) {
      if (now - t < idleMs) continue;
      const id = this.entries.idOf(key);
      if (wait.some((g) => g.hasId(id))) continue;
      const e = this.entries.get(key);
      const usual = e && !this.reopened.has(key) && fresh.some((g) => g.hasId(id)) ? this.expectedSize(e) : undefined;
      if (e && usual !== undefined && e.n < usual && now - t < underSizeMs) continue;
      if (e) this.complete(e, ch);
      else this.lastUpdate.delete(key);
    }
  }

  /**
   * A file is gone or re-read from scratch: the groups it created go, the roll-outs it gave to
   * other groups leave them (which take a new version). Returns the number of roll-outs dropped.
   */
  dropFile(path: string, ch: Change): number {
    const fg = this.files.get(path);
    if (!fg) return 0;
    this.files.delete(path);
    let dropped = 0;
    for (const key of fg.keys()) {
      let e = this.entries.get(key);
      const turns = this.turns.get(key);
      if (turns) for (const [s, t] of turns) if (t.source.file === path) turns.delete(s);
      if (!e) continue;
      if (e.origin === 'rollouts' && e.cold) e = this.warm(e);
      if (e.origin === 'group') {
        if (e.firstSource.file !== path) continue;
        dropped += e.n;
        this.forget(key);
        ch.removed.add(key);
        continue;
      }
      const list = e.list!;
      const kept = list.filter((r) => r.source.file !== path);
      if (kept.length === list.length) continue;
      dropped += list.length - kept.length;
      if (kept.length === 0) {
        this.forget(key);
        ch.removed.add(key);
      } else {
        e.list = kept;
        e.n = kept.length;
        e.version = nextVersion();
        if (e.firstSource.file === path) {
          e.firstSource = kept.reduce((a, r) => (this.before(r.source, a) ? r.source : a), kept[0].source);
          this.disordered = true;
        }
        ch.changed.add(key);
      }
    }
    return dropped;
  }

  private before(a: Pick<RolloutSource, 'file' | 'line'>, b: Pick<RolloutSource, 'file' | 'line'>): boolean {
    const c = a.file === b.file ? 0 : (this.opts.order ?? ((x: string, y: string) => (x < y ? -1 : 1)))(a.file, b.file);
    return c < 0 || (c === 0 && a.line < b.line);
  }

  /** A new group, at the end (a Map's order); noted when a fresh read would put it before another. */
  private append(e: GroupEntry): void {
    this.noteOrder(e);
    this.entries.set(e.key, e);
  }

  private noteOrder(e: GroupEntry): void {
    const s = e.firstSource;
    if (this.last && this.before(s, this.last)) this.disordered = true;
    else this.last = { file: s.file, line: s.line };
  }

  /**
   * Puts the groups back in the order a fresh read gives (first records by file order, then line),
   * after a file was re-read or a new file sorts before others. Nothing to do (and no pass over the
   * groups) unless a group was appended before another's place or its first record moved.
   * Whether it had to: the groups were not only appended to.
   */
  reorder(): boolean {
    if (!this.disordered) return false;
    this.disordered = false;
    const last = this.entries.sort((x, y) => (this.before(x.firstSource, y.firstSource) ? -1 : this.before(y.firstSource, x.firstSource) ? 1 : 0));
    this.last = last && { file: last.firstSource.file, line: last.firstSource.line };
    return true;
  }

  private forget(key: GroupKey): void {
    const e = this.entries.get(key);
    this.entries.delete(key);
    this.lastUpdate.delete(key);
    this.turns.delete(key);
    this.reopened.delete(key);
    const was = this.counted(e, key);
    if (e && was !== undefined) {
      const h = this.sizeHist.get(streamOf(e));
      const c = (h?.get(was) ?? 1) - 1;
      if (h && c > 0) h.set(was, c);
      else h?.delete(was);
    }
    this.countedSize.delete(key);
  }

  /**
   * The assembler's state as plain data, for a persisted index (follow/persist.ts): the groups in
   * order, and the completion and size rules' data. A followed assembler only (a one-shot one
   * releases its groups). Multi-turn sessions name their kept roll-out by its index in the list.
   */
  /** `perGroupApart`: without the counted sizes (a save asks for them group by group: `countedSizeOf`). */
  snapshot(perGroupApart = false): AssemblerState {
    const turns: AssemblerState['turns'] = [];
    for (const [key, m] of this.turns) {
      const held = this.entries.get(key);
      const list = (held && this.warm(held))?.list ?? [];
      const sessions: Array<[string, number, number]> = [];
      for (const [s, t] of m) sessions.push([s, t.output, list.findIndex((r) => r.source === t.source)]);
      turns.push([key, sessions]);
    }
    return {
      files: [...this.files].map(([f, g]) => [f, g.list(), g.maxStep]),
      lastUpdate: [...this.lastUpdate],
      sizeHist: [...this.sizeHist].map(([s, h]) => [s, [...h]]),
      countedSize: perGroupApart ? [] : [...this.countedSize], // a cold head counted with its own size is counted at restore (`counted`)
      reopened: [...this.reopened],
      streamStep: [...this.streamStep],
      turns,
      sizeWarned: this.sizeWarned,
    };
  }

  /**
   * A saved group put back into an empty assembler, in the saved order (before `restore`), with
   * the size it was counted with (NaN: not counted). It takes a new version: versions belong to a
   * process, and a restored group is new to it. `e` may be reused by the caller (nothing of it is
   * kept). Returns the group's id in the table.
   */
  restoreGroup(e: GroupEntry, counted: number): number {
    e.version = nextVersion();
    this.noteOrder(e);
    const id = this.entries.put(e.key, e);
    // given beside the group (a pair per group is garbage at 10 M roll-outs); a cold head counted with its own size is not kept (`counted`)
    if (!Number.isNaN(counted) && !(e.cold && e.complete && counted === e.n)) this.countedSize.set(e.key, counted);
    return id;
  }

  /** Room for `groups` more (a restore knows how many it brings). */
  reserve(groups: number): void {
    this.entries.reserve(this.entries.size + groups);
  }

  /** Back to empty: a restore that failed part way (its groups are not to be trusted). */
  reset(): void {
    this.entries.clear();
    this.countedSize.clear();
    this.last = undefined;
    this.disordered = false;
  }

  /**
   * Puts back a snapshot's state, its groups already restored (`restoreGroup`). A generator: it
   * yields every few thousand items, so that the caller can give the event loop a turn.
   */
  *restore(s: AssemblerState): Generator<void> {
    let i = 0;
    for (const [f, keys, maxStep] of s.files) {
      const ids = new Int32Array(keys.length);
      let n = 0;
      for (const k of keys) {
        const id = this.entries.idOf(k);
        if (id >= 0) ids[n++] = id;
        if (++i % 4096 === 0) yield;
      }
      this.files.set(f, new FileGroups(this.entries, ids.subarray(0, n).sort(), maxStep));
    }
    for (const [k, t] of s.lastUpdate) this.lastUpdate.set(k, t);
    for (const [st, h] of s.sizeHist) this.sizeHist.set(st, new Map(h));
    for (const [k, n] of s.countedSize) {
      this.countedSize.set(k, n);
      if (++i % 256 === 0) yield;
    }
    for (const k of s.reopened) this.reopened.add(k);
    for (const [st, n] of s.streamStep) this.streamStep.set(st, n);
    for (const [key, sessions] of s.turns) {
      const held = this.entries.get(key);
      const list = (held && this.warm(held))?.list ?? [];
      const m = new Map<string, { output: number; source: RolloutSource }>();
      for (const [session, output, i] of sessions) if (list[i]) m.set(session, { output, source: list[i].source });
      this.turns.set(key, m);
    }
    this.sizeWarned = s.sizeWarned;
  }

  /** The group has multi-turn sessions (their kept outputs are held by identity: it stays in memory). */
  /** The size a group was counted with, when kept (a cold head counted with its own size has none: `counted`). */
  countedSizeOf(key: GroupKey): number | undefined {
    return this.countedSize.get(key);
  }

  hasTurns(key: GroupKey): boolean {
    return this.turns.has(key);
  }

  /** One-shot: the group was handed out; only its identity is kept (duplicates and late roll-outs are still recognised). */
  release(key: GroupKey): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.released.set(key, `${e.firstSource.file}:${e.firstSource.line}`);
    if (e.origin === 'group') this.releasedGroupRecord.add(key);
    this.entries.delete(key);
    this.lastUpdate.delete(key);
    this.turns.delete(key);
    this.countedSize.delete(key);
  }
}
