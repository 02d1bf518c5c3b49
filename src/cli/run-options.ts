// Options every run-reading command shares: how notices are printed, `--jobs`, `--max-group-size`.
import { DEFAULT_MAX_GROUP_SIZE } from '../engine';
import type { Notice } from '../logs/log-layer';
import { safeText } from '../logs/safe-text';
import { type CliIO, parseInteger } from './args';
import { defaultJobs } from '../util/worker-pool';

/** Prints notices; `errors` counts the error-level ones (the command then exits non-zero). */
export function noticePrinter(io: CliIO): ((n: Notice) => void) & { errors: number } {
  const print = ((n: Notice) => {
    if (n.level === 'error') print.errors++;
    const at = n.file ? `${n.file}${n.line ? `:${n.line}` : ''}` : '';
    const where = at && !n.message.startsWith(at) ? `${at}: ` : '';
    io.stderr.write(`consensus-lens: ${n.level === 'info' ? '' : `${n.level}: `}${safeText(where + n.message)}\n`);
  }) as ((n: Notice) => void) & { errors: number };
  print.errors = 0;
  return print;
}

/** `--max-group-size N`: the largest group scored (default DEFAULT_MAX_GROUP_SIZE). */
export function maxGroupSizeFrom(flag: string | undefined): number {
  return parseInteger(flag, 'max-group-size', 1) ?? DEFAULT_MAX_GROUP_SIZE;
}

export function jobsFrom(flag: string | undefined): number {
  return parseInteger(flag, 'jobs', 0, 64) ?? defaultJobs();
}
