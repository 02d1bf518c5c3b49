// Which folders of the workspace hold runs. The candidates are the workspace's log files (VS Code's
// file search over CANDIDATE_GLOB, `findWorkspaceRuns` in discovery.ts, bounded to MAX_CANDIDATES):
// every file name the extension activates on (package.json `workspaceContains`) matches it, which
// test/extension/discover.test.ts holds to package.json. This module decides, without 'vscode',
// which folders they make:
//   - a JSON Lines file the reader reads (native, verl, NeMo RL: the reader's own recognition,
//     `isLogFile` in src/extension/runs/recognise.ts) makes its folder a run;
//   - a TRL `completions/*.parquet` (`completions/train/*.parquet` since TRL 1.0) makes the folder
//     above `completions` a run (src/logs/join.ts tableRoot);
//   - a W&B table file (`files/media/table/**/*.table.json`) the reader reads makes the W&B run
//     folder (the one holding `files/`) a run;
//   - a prime-rl or SkyRL file in a per-step folder the writer makes inside its run (`step_N`,
//     `global_step_N_evals`, `eval_only`) makes the folder above it a run;
//   - only the outermost such folders are runs (a run is read recursively: its sub-folders are
//     its sub-runs, see src/logs);
//   - a folder whose real path lies outside every workspace folder (reached through a symbolic
//     link) is not a run of the workspace: discovery never follows a link out of the workspace.
// The same function serves activation, the watcher that finds runs a training job creates while
// the window is open, and *Refresh Runs*.
import { realpath } from 'node:fs/promises';
import { basename, dirname, sep } from 'node:path';
import { tableRoot } from '../../logs/join';
import { isLogFile } from './recognise';

/** At most this many log files are looked at per scan (the file search's limit). */
export const MAX_CANDIDATES = 2000;

/** The workspace scan's file search: JSON Lines logs, TRL parquet, W&B table files. */
export const CANDIDATE_GLOB = '**/{*.jsonl,*.parquet,*.table.json}';

/** Per-step folders a writer makes inside its run (prime-rl `step_N`, SkyRL `global_step_N_evals`). */
const STEP_FOLDER = /^(step_\d+|global_step_\d+_evals|eval_only)$/;

/** The W&B run folder of a table file: the folder holding `files/media/table/`. */
const WANDB_TABLE = /^(.*)[\\/]files[\\/]media[\\/]table(?:[\\/]|$)/;

const inside = (p: string, root: string): boolean => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);

/** The run folders the candidate files make (outermost only), inside the workspace folders `roots`. */
export async function runFolders(files: string[], roots: string[]): Promise<string[]> {
  const realRoots = (await Promise.all(roots.map((r) => realpath(r).catch(() => null)))).filter((r): r is string => r !== null);
  const dirs = new Set<string>();
  const rejected = new Set<string>();
  for (const f of files.slice(0, MAX_CANDIDATES)) {
    const parquet = /\.parquet$/i.test(f);
    const dir = dirname(f);
    // TRL's table: its output_dir, as the reader joins it (`completions/` or `completions/train/`).
    const trl = parquet ? tableRoot(f) : undefined;
    if (parquet && trl === undefined) continue;
    const wandb = /\.table\.json$/i.test(f) ? WANDB_TABLE.exec(dir) : undefined;
    if (wandb === null) continue;
    const run = trl ?? wandb?.[1] ?? (STEP_FOLDER.test(basename(dir)) ? dirname(dir) : dir);
    if (dirs.has(run) || rejected.has(run)) continue;
    const real = await realpath(run).catch(() => null);
    if (real === null || !realRoots.some((r) => inside(real, r))) {
      rejected.add(run);
      continue;
    }
    if (parquet || (await isLogFile(f))) dirs.add(run);
  }
  const sorted = [...dirs].sort((a, b) => a.length - b.length);
  return sorted.filter((d, i) => !sorted.slice(0, i).some((p) => inside(d, p) && d !== p));
}

/** Whether `file` lies in one of the followed run paths (its own index then picks it up). */
export function inFollowedRun(file: string, runPaths: Iterable<string>): boolean {
  for (const p of runPaths) if (inside(file, p)) return true;
  return false;
}
