// A private temporary folder that is removed however the command ends: normally (the caller's
// `finally`), or by SIGINT, SIGTERM or SIGHUP (Ctrl-C, a job scheduler's stop, a closed terminal),
// which would otherwise end the process before any `finally` runs and leave the folder behind.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export interface TempDir {
  path: string;
  /** Removes the folder and the signal handlers (idempotent). */
  remove(): void;
}

export function tempDir(prefix: string): TempDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  let removed = false;
  const onSignal = (signal: NodeJS.Signals) => {
    remove();
    // Ended by the signal, as without the handler (its exit status: 128 + the signal's number).
    process.kill(process.pid, signal);
  };
  function remove(): void {
    if (removed) return;
    removed = true;
    for (const s of SIGNALS) process.removeListener(s, onSignal);
    rmSync(path, { recursive: true, force: true });
  }
  for (const s of SIGNALS) process.on(s, onSignal);
  return { path, remove };
}
