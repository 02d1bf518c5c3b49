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

/**
 * `outcomeChecks`: half the group records are of a few questions asked again at later steps, with
 * MS-TTRL's outcome checks (some without), so that a question's cache runs across steps.
 */
export function randomHistory(dir: string, seed: number, groupSize = 6, outcomeChecks = false): RandomHistory {
  const r = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  let step = 1;
  let q = 0;
  /** A roll-out group being written, per file: its key and the next sample index. */
  const open = new Map<string, { step: number; qid: string; next: number }>();
  /** The second half of a half-written line, per file. */
  const half = new Map<string, string>();
  const files = () => readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  /** Questions asked again, each once a step at most. */
  const asked = new Set<string>();
  const again = (): string | null => {
    const free = ['m0', 'm1', 'm2'].filter((m) => !asked.has(`${step}/${m}`));
    if (!free.length) return null;
    const m = pick(free);
    asked.add(`${step}/${m}`);
    return m;
  };
  /** A question asked again, with outcome checks (or none), or null when each was asked at this step. */
  const askAgain = (): Record<string, unknown> | null => {
    const m = again();
    if (!m) return null;
    const checks = r() < 0.7 ? ['0', '1', '2'].filter(() => r() < 0.6).map((answer) => ({ answer, passed: Math.floor(r() * 5), trials: 4 })) : [];
    return groupRec(step, m, 1 + Math.floor(r() * groupSize), { outcome_checks: checks, extra: { operator: 'msttrl' } });
  };
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
      // a reward flipped, or an outcome check's pass count changed (MS-TTRL's cache, for later steps)
      const digit = /"(reward|passed)":([0-4])/g;
      const f = pick(files().filter((x) => /"(reward|passed)":[0-4]/.test(readFileSync(join(dir, x), 'utf8'))));
      if (!f) return null;
      const p = join(dir, f);
      const t = readFileSync(p, 'utf8');
      const at = [...t.matchAll(digit)];
      const m = pick(at);
      const i = m.index! + m[0].length - 1;
      const to = m[1] === 'reward' ? (m[2] === '1' ? '0' : '1') : String((Number(m[2]) + 1 + Math.floor(r() * 4)) % 5);
      const u = t.slice(0, i) + to + t.slice(i + 1);
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
    // (outcomeChecks) a file per step: a change to one step's checks leaves the later steps' files as they are
    'ask again': () => {
      const rec = outcomeChecks ? askAgain() : null;
      if (!rec) return null;
      const f = `s${step}.jsonl`;
      appendFileSync(join(dir, f), (half.get(f) ?? '') + jsonl([rec]));
      half.delete(f);
      return f;
    },
    // (outcomeChecks) an earlier step's pass count changed in place: the later steps' groups of the
    // question, in files that did not change, read another cache
    'earlier checks rewritten': () => {
      const f = outcomeChecks ? pick(files().filter((x) => /^s\d+\.jsonl$/.test(x) && Number(x.slice(1, -6)) < step && /"passed":[0-4]/.test(readFileSync(join(dir, x), 'utf8')))) : undefined;
      if (!f) return null;
      const p = join(dir, f);
      const t = readFileSync(p, 'utf8');
      const m = pick([...t.matchAll(/"passed":([0-4])/g)]);
      const i = m.index! + m[0].length - 1;
      const u = t.slice(0, i) + String((Number(m[1]) + 1 + Math.floor(r() * 4)) % 5) + t.slice(i + 1);
      const st = statSync(p);
      writeFileSync(p, u);
      utimesSync(p, st.atime, st.mtime);
      return f;
    },
    'next step': () => {
      step++;
      return null;
    },
  };
  const kinds = Object.keys(changes);
  const weights = [6, 2, 3, 1, 1, 1, outcomeChecks ? 5 : 0, outcomeChecks ? 4 : 0, outcomeChecks ? 4 : 1];
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
