// Random changes to a run folder's log files, seeded (persist-random tests): appends of group and
// roll-out records, half-written lines (completed by the next append to the file), same-length
// rewrites with the times put back, truncations, files renamed over, deleted, new; and new steps.
import { appendFileSync, readFileSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rng } from '../../scripts/synth';
import { groupRec, jsonl, rollout } from './helpers.js';

export interface RandomHistory {
  /** Makes one random change; names it (and the file it touched). */
  next(): string;
  /** Appends `n` records to `f` (a new file when it does not exist). */
  append(f: string, n: number): void;
  /** Files that end in half a line now. */
  readonly halfWritten: number;
}

export function randomHistory(dir: string, seed: number, groupSize = 6): RandomHistory {
  const r = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  let step = 1;
  let q = 0;
  /** A roll-out group being written, per file: its key and the next sample index. */
  const open = new Map<string, { step: number; qid: string; next: number }>();
  /** The second half of a half-written line, per file. */
  const half = new Map<string, string>();
  const files = () => readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  const record = (f: string): Record<string, unknown> => {
    if (r() < 0.5) return groupRec(step, `q${q++}`, 1 + Math.floor(r() * groupSize), r() < 0.3 ? { ground_truth: String(Math.floor(r() * 3)) } : {});
    let o = open.get(f);
    if (!o || r() < 0.3) open.set(f, (o = { step, qid: `r${q++}`, next: 0 }));
    return rollout(o.step, o.qid, o.next++, { reward: Math.floor(r() * 2) });
  };
  const append = (f: string, n: number) => {
    const p = join(dir, f);
    appendFileSync(p, (half.get(f) ?? '') + jsonl(Array.from({ length: n }, () => record(f))));
    half.delete(f);
  };
  const changes: Record<string, () => string | null> = {
    append: () => {
      const f = files().length && r() < 0.8 ? pick(files()) : `f${q++}.jsonl`;
      append(f, 1 + Math.floor(r() * 3));
      return f;
    },
    'half a line': () => {
      const f = pick(files().filter((x) => !half.has(x)));
      if (!f) return null;
      const line = JSON.stringify(record(f));
      const cut = 1 + Math.floor(r() * (line.length - 2));
      appendFileSync(join(dir, f), line.slice(0, cut));
      half.set(f, `${line.slice(cut)}\n`);
      return f;
    },
    'same-length rewrite, times put back': () => {
      const f = pick(files().filter((x) => /"reward":[01]/.test(readFileSync(join(dir, x), 'utf8'))));
      if (!f) return null;
      const p = join(dir, f);
      const t = readFileSync(p, 'utf8');
      const at = [...t.matchAll(/"reward":([01])/g)];
      const m = pick(at);
      const i = m.index! + 9;
      const u = t.slice(0, i) + (m[1] === '1' ? '0' : '1') + t.slice(i + 1);
      const st = statSync(p);
      writeFileSync(p, u);
      utimesSync(p, st.atime, st.mtime);
      return f;
    },
    truncated: () => {
      const f = pick(files());
      if (!f) return null;
      const p = join(dir, f);
      const lines = readFileSync(p, 'utf8').split('\n');
      const keep = Math.floor(r() * (lines.length - 1));
      writeFileSync(p, lines.slice(0, keep).map((l) => `${l}\n`).join(''));
      half.delete(f);
      open.delete(f);
      return f;
    },
    'renamed over': () => {
      const f = pick(files());
      if (!f) return null;
      writeFileSync(join(dir, 'next.part'), jsonl(Array.from({ length: 1 + Math.floor(r() * 3) }, () => record(f))));
      renameSync(join(dir, 'next.part'), join(dir, f));
      half.delete(f);
      return f;
    },
    deleted: () => {
      const f = pick(files());
      if (!f) return null;
      rmSync(join(dir, f));
      half.delete(f);
      open.delete(f);
      return f;
    },
    'next step': () => {
      step++;
      return null;
    },
  };
  const kinds = Object.keys(changes);
  const weights = [6, 2, 3, 1, 1, 1, 1];
  const choose = () => {
    let x = r() * weights.reduce((a, b) => a + b, 0);
    for (let i = 0; i < kinds.length; i++) if ((x -= weights[i]) < 0) return kinds[i];
    return kinds[0];
  };
  return {
    next() {
      const kind = choose();
      const f = changes[kind]();
      return `${kind}${f ? ` (${f})` : ''}`;
    },
    append,
    get halfWritten() {
      return half.size;
    },
  };
}
