// Whether a file named by the user (Open Log File as Run, Open With… → Consensus Lens Run, Open
// Run… on a file) is a log the reader reads — asked before the file is followed, so a file that is
// not a run is refused with the reader's own reason (the notice `consensus-lens report FILE`
// prints) instead of opening as a run of "0 steps · 0 groups" with a green "no alarm", and nothing
// already open changes. The answer is the reader's: src/logs/records.ts readFileOnce, the pass the
// CLI reads a file with, run until it yields its first records (never the whole of a log). Pure
// Node: no 'vscode'.
import { open, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { readFileOnce } from '../../logs/records';
import { detectLogFile, type Notice } from '../../logs/log-layer';
import { PROBE_BYTES } from '../../logs/parse';

/**
 * null when `path` is a folder (a run folder is read file by file; what is not a log in it is
 * skipped quietly), a path not there yet (a training job's log folder, followed before the job
 * writes it), a file with at least one record, or a file with none yet but nothing the reader
 * rejects (empty, or an incomplete first line: a log being written, followed as it grows); else
 * why it is not a run, in the reader's words (the CLI's error for the file, without "; skipped").
 */
export async function whyNotARun(path: string): Promise<string | null> {
  try {
    if ((await stat(path)).isDirectory()) return null;
  } catch {
    return null;
  }
  const v = await readerVerdict(path);
  return v.records ? null : (v.error ?? null);
}

/**
 * null when the reader reads records from `file`; else why not, in the reader's words (a missing
 * or unreadable file says so, an empty one too). The workspace scan asks this of a candidate whose
 * first record outgrows the first block.
 */
export async function whyNotALog(path: string): Promise<string | null> {
  const v = await readerVerdict(path);
  return v.records ? null : (v.error ?? v.warning ?? `${path}: no records`);
}

/** The reader's pass over `path` (readFileOnce, as the CLI reads a file named alone) up to its first records. */
async function readerVerdict(path: string): Promise<{ records: boolean; error?: string; warning?: string }> {
  const notices: Notice[] = [];
  // Named alone (not found in a run folder): an unsupported file is an error notice, as for the CLI.
  const reader = readFileOnce(dirname(path), path, (n) => void notices.push(n));
  for await (const batch of reader) {
    if (batch.length) {
      await reader.return(undefined); // closes the file: one batch of records answers the question
      return { records: true };
    }
  }
  const said = (level: Notice['level']) => notices.find((n) => n.level === level)?.message.replace(/; skipped$/, '');
  return { records: false, error: said('error'), warning: said('warning') };
}

/**
 * Whether the workspace scan takes `file` as a log: the reader's format detection on the file's
 * first block (detectLogFile: the first lines, PROBE_BYTES at most, as cheap as the scan needs for
 * up to MAX_CANDIDATES files); a first block that holds no whole line (a native group of long
 * roll-outs on one line) is judged by the reader itself (`whyNotALog`).
 */
export async function isLogFile(file: string): Promise<boolean> {
  if ((await detectLogFile(file)) !== undefined) return true;
  if (!(await firstLineOutgrowsProbe(file))) return false;
  return (await whyNotALog(file)) === null;
}

async function firstLineOutgrowsProbe(file: string): Promise<boolean> {
  try {
    const fh = await open(file, 'r');
    try {
      const block = Buffer.alloc(PROBE_BYTES);
      const { bytesRead } = await fh.read(block, 0, block.length, 0);
      return bytesRead === block.length && block.indexOf(10) === -1;
    } finally {
      await fh.close();
    }
  } catch {
    return false;
  }
}
