// Helpers for the log tests: temp run folders and collecting readRun's output.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { readRun, type Notice, type RunIndex } from '../../src/logs/log-layer.js';
import type { Group } from '../../src/engine';

export function tempDir(prefix = 'cl-logs-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function write(dir: string, rel: string, content: string | Buffer): string {
  const p = join(dir, rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, content);
  return p;
}

export const jsonl = (objs: unknown[]): string => objs.map((o) => JSON.stringify(o)).join('\n') + '\n';

export async function collect(path: string, opts?: Parameters<typeof readRun>[2]): Promise<{ groups: Group[]; notices: Notice[] }> {
  const notices: Notice[] = [];
  const groups: Group[] = [];
  for await (const g of readRun(path, (n) => notices.push(n), opts)) groups.push(g);
  return { groups, notices };
}

export function rollout(step: number, qid: string, i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { kind: 'rollout', step, question_id: qid, sample_idx: i, response: `resp ${qid} ${i} \\boxed{${i % 2}}`, mean_logprob: -0.1 * (i + 1), ...extra };
}

export function groupRec(step: number, qid: string, n: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: 'group',
    step,
    question_id: qid,
    prompt: `prompt ${qid}`,
    ground_truth: '1',
    rollouts: Array.from({ length: n }, (_, i) => ({ response: `g ${qid} ${i} \\boxed{${i % 3}}`, mean_logprob: -0.5 - i / 100, reward: i % 3 === 1 ? 1 : 0 })),
    ...extra,
  };
}

/** The extras restored under `tag`, by group key (`restoredExtras` gives them by group id). */
export function restoredByKey(idx: RunIndex, tag: string): Map<string, unknown> {
  return new Map([...idx.restoredExtras(tag)].map(([id, x]) => [idx.keyOf(id), x]));
}
