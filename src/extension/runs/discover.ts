// Which folders of the workspace hold runs. The candidates are the workspace's log files (VS Code's
// file search, `findWorkspaceRuns` in extension.ts, bounded to MAX_CANDIDATES); this module decides,
// without 'vscode', which folders they make:
//   - a JSONL file whose first 4 KiB look like a native or verl record makes its folder a run;
//     a TRL `completions/*.parquet` makes the folder above `completions` a run; a prime-rl
//     (`example_id` + `completion`) or SkyRL (`input_prompt` + `output_response`) file in a per-step
//     folder — and a miles trajectory file (`sample_index` + `messages`) its own folder —
//     (`step_N`, `global_step_N_evals`, `eval_only`) makes the folder above it a run;
//   - only the outermost such folders are runs (a run is read recursively: its sub-folders are
//     its sub-runs, see src/logs);
//   - a folder whose real path lies outside every workspace folder (reached through a symbolic
//     link) is not a run of the workspace: discovery never follows a link out of the workspace.
// The same function serves activation, the watcher that finds runs a training job creates while
// the window is open, and *Refresh Runs*.
import { open, realpath } from 'node:fs/promises';
import { basename, dirname, sep } from 'node:path';

/** Per-step folders a writer makes inside its run (prime-rl `step_N`, SkyRL `global_step_N_evals`). */
const STEP_FOLDER = /^(step_\d+|global_step_\d+_evals|eval_only)$/;

/** At most this many log files are looked at per scan (the file search's limit). */
export const MAX_CANDIDATES = 2000;

export async function looksLikeRunLog(file: string): Promise<boolean> {
  try {
    const fh = await open(file, 'r');
    try {
      const buf = Buffer.alloc(4096);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      const head = buf.subarray(0, bytesRead).toString('utf8');
      const has = (k: string) => new RegExp(`"${k}"\\s*:`).test(head);
      return (
        has('(question_id|rollouts)') ||
        (has('input') && has('output')) ||
        (has('example_id') && has('completion')) ||
        (has('input_prompt') && has('output_response')) ||
        (has('sample_index') && has('messages'))
      );
    } finally {
      await fh.close();
    }
  } catch {
    return false;
  }
}

const inside = (p: string, root: string): boolean => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);

/** The run folders the candidate files make (outermost only), inside the workspace folders `roots`. */
export async function runFolders(files: string[], roots: string[]): Promise<string[]> {
  const realRoots = (await Promise.all(roots.map((r) => realpath(r).catch(() => null)))).filter((r): r is string => r !== null);
  const dirs = new Set<string>();
  const rejected = new Set<string>();
  for (const f of files.slice(0, MAX_CANDIDATES)) {
    const parquet = f.endsWith('.parquet');
    const dir = dirname(f);
    if (parquet && !/(^|[\\/])completions$/.test(dir)) continue;
    const run = parquet || STEP_FOLDER.test(basename(dir)) ? dirname(dir) : dir;
    if (dirs.has(run) || rejected.has(run)) continue;
    const real = await realpath(run).catch(() => null);
    if (real === null || !realRoots.some((r) => inside(real, r))) {
      rejected.add(run);
      continue;
    }
    if (parquet || (await looksLikeRunLog(f))) dirs.add(run);
  }
  const sorted = [...dirs].sort((a, b) => a.length - b.length);
  return sorted.filter((d, i) => !sorted.slice(0, i).some((p) => inside(d, p) && d !== p));
}

/** Whether `file` lies in one of the followed run paths (its own index then picks it up). */
export function inFollowedRun(file: string, runPaths: Iterable<string>): boolean {
  for (const p of runPaths) if (inside(file, p)) return true;
  return false;
}
