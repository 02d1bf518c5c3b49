// One run, two logs (docs/training-loop.md, "One run, two logs"): TRL's completions table
// (`<output_dir>/completions/…parquet`) and the log `consensus_lens.trl` writes of the same run
// (roll-out records with `framework: "trl"`, in a folder inside that output_dir) are one run: each
// table group joins the log's group of the same step and prompt, whose roll-outs then carry the
// advantage TRL logged (what trained) beside everything the log has (confidence, tokens, ground
// truth, the operator's label). The table group is then not a group of its own.
//
// Rules (the assembler calls `seen` when a group is added or completes; either may come first):
// - A table group: format 'trl', a group record from a *.parquet file under a `completions`
//   folder, not evaluation. A log group: format 'native', framework 'trl', not validation.
// - Matched by step, prompt text (as both write it) and occurrence within the step (`#n` of the
//   question id), within one run folder: the log's file is inside the table's output_dir
//   (`output_dir/consensus`), or inside the folder that holds the output_dir (`run/trl` beside
//   `run/consensus`) when that folder holds no other TRL output_dir with the same step and prompt
//   (then nothing is joined: which run the log belongs to is not known). The nearest folder wins.
// - Joined only when the log group is complete, has as many roll-outs as the table group, and,
//   where the table has the log's own reward column (`consensus_<operator>`), the rewards agree
//   row by row (1e-6, TRL keeps float32): roll-outs are matched by position (both are in TRL's
//   batch order). Otherwise both stay, with a warning naming the step and question.
import { dirname, sep } from 'node:path';
import { nextVersion, type GroupEntry } from './entries.js';
import type { GroupKey, NoticeSink } from './log-types.js';
import type { GroupTable } from './group-table.js';

/** A change the join makes: `removed` the table group, `changed` the log group. */
export interface JoinChange {
  added: Set<GroupKey>;
  completed: Set<GroupKey>;
  removed: Set<GroupKey>;
  changed: Set<GroupKey>;
}

/** The output_dir of a TRL completions table file (the folder holding `completions/`), or undefined. */
export function tableRoot(file: string): string | undefined {
  const m = /^(.*)[\\/]completions[\\/][^\\/]*(?:[\\/][^\\/]*)?\.parquet$/i.exec(file);
  return m ? m[1] : undefined;
}

const occurrence = (questionId: string): string => /#(\d+)$/.exec(questionId)?.[1] ?? '1';
const matchKey = (e: GroupEntry): string => `${e.step}\0${occurrence(e.questionId)}\0${e.prompt ?? ''}`;

function roleOf(e: GroupEntry): 'table' | 'log' | undefined {
  if (e.prompt === undefined || e.stream === 'validation') return undefined;
  if (e.format === 'trl' && e.origin === 'group' && e.packed && tableRoot(e.firstSource.file) !== undefined) return 'table';
  if (e.format === 'native' && e.framework === 'trl') return 'log';
  return undefined;
}

export class TableJoin {
  /** `${output_dir}\0${matchKey}` → the table group. */
  private readonly tables = new Map<string, GroupKey>();
  /** `${the folder holding output_dir}\0${matchKey}` → the table groups. */
  private readonly byParent = new Map<string, Set<GroupKey>>();
  /** matchKey → the log groups. */
  private readonly logs = new Map<string, Set<GroupKey>>();
  private readonly warned = new Set<string>();
  private readonly told = new Set<string>();
  joined = 0;

  constructor(
    private readonly entries: GroupTable,
    private readonly onNotice: NoticeSink,
    /** Removes a group from the assembler (its size histogram, idle timers). */
    private readonly forget: (key: GroupKey) => void,
    /** A cold group (restored from a persisted index) read back: its prompt and roll-outs at hand. */
    private readonly warm: (e: GroupEntry) => GroupEntry,
  ) {}

  /** A group was added or completed: joins it with its counterpart when both are there. */
  seen(e: GroupEntry, ch: JoinChange): void {
    if (e.cold && (e.format === 'trl' || e.framework === 'trl')) e = this.warm(e);
    const role = roleOf(e);
    if (!role) return;
    const mk = matchKey(e);
    if (role === 'table') {
      const root = tableRoot(e.firstSource.file)!;
      this.tables.set(`${root}\0${mk}`, e.key);
      const pk = `${dirname(root)}\0${mk}`;
      let s = this.byParent.get(pk);
      if (!s) this.byParent.set(pk, (s = new Set()));
      s.add(e.key);
      for (const k of this.logs.get(mk) ?? []) {
        const l = this.entries.get(k);
        if (l?.complete && this.tableFor(l, mk) === e && this.join(l, e, ch)) return;
      }
      return;
    }
    let s = this.logs.get(mk);
    if (!s) this.logs.set(mk, (s = new Set()));
    s.add(e.key);
    if (!e.complete) return;
    const table = this.tableFor(e, mk);
    if (table) this.join(e, table, ch);
  }

  /** The table group of a log group's run: from the log's folder outwards, the first output_dir it is in or beside. */
  private tableFor(log: GroupEntry, mk: string): GroupEntry | undefined {
    const parts = log.firstSource.file.split(/[\\/]/);
    for (let i = parts.length - 1; i > 0; i--) {
      const dir = parts.slice(0, i).join(sep);
      const inside = this.tables.get(`${dir}\0${mk}`);
      if (inside !== undefined) return this.entries.get(inside);
      const beside = this.byParent.get(`${dir}\0${mk}`);
      if (beside?.size === 1) return this.entries.get([...beside][0]);
      if (beside && beside.size > 1) return undefined; // several runs' tables: not this one's to guess
    }
    return undefined;
  }

  private join(log: GroupEntry, table: GroupEntry, ch: JoinChange): boolean {
    log = this.warm(log);
    table = this.warm(table);
    const p = table.packed!;
    const warn = (why: string) => {
      const id = `${table.key}\0${log.key}`;
      if (this.warned.has(id)) return;
      this.warned.add(id);
      this.onNotice({ level: 'warning', message: `${table.firstSource.file}:${table.firstSource.line}: TRL's table and the log ${log.firstSource.file} both have step ${log.step}, question ${log.questionId}, but ${why}: shown as two groups`, file: table.firstSource.file, line: table.firstSource.line });
    };
    if (table.n !== log.n) return warn(`the table has ${table.n} roll-outs and the log ${log.n}`), false;
    const logRewards = log.list ? log.list.map((r) => r.reward) : Array.from(log.packed!.rw, (x) => (Number.isNaN(x) ? null : x));
    const col = log.loggedOperator ? `consensus_${log.loggedOperator}` : undefined;
    for (let i = 0; col && i < table.n; i++) {
      const t = p.extra?.[i]?.[col];
      const l = logRewards[i];
      if (typeof t === 'number' && l !== null && Math.abs(t - l) > 1e-6 * Math.max(1, Math.abs(l)))
        return warn(`roll-out ${i} has reward ${t} in the table's ${col} and ${l} in the log`), false;
    }
    for (let i = 0; i < table.n; i++) {
      const adv = p.extra?.[i]?.advantage;
      if (typeof adv !== 'number' || !Number.isFinite(adv)) continue;
      if (log.list) log.list[i].extra = { ...log.list[i].extra, advantage: adv };
      else {
        const x = (log.packed!.extra ??= new Array(log.n).fill(undefined));
        x[i] = { ...x[i], advantage: adv };
      }
    }
    log.version = nextVersion();
    if (!ch.added.has(log.key) && !ch.completed.has(log.key)) ch.changed.add(log.key);
    // The table group goes: it is the log's group.
    this.forget(table.key);
    const root = tableRoot(table.firstSource.file)!;
    this.tables.delete(`${root}\0${matchKey(table)}`);
    this.byParent.get(`${dirname(root)}\0${matchKey(table)}`)?.delete(table.key);
    if (ch.added.has(table.key)) {
      ch.added.delete(table.key);
      ch.completed.delete(table.key);
    } else ch.removed.add(table.key);
    this.joined++;
    if (!this.told.has(root)) {
      this.told.add(root);
      this.onNotice({
        level: 'info',
        message: `${root}: TRL's completions table and the consensus_lens.trl log of the same run are one run: their groups are joined by step and prompt, with TRL's logged advantages beside ours`,
      });
    }
    return true;
  }
}
