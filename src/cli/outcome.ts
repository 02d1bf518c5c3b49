// What a reading command (score, sweep, report, health) prints besides its output, and the exit
// code a script can trust: notices naming file and line, a progress line on a terminal, and at the
// end a summary of skipped input.
//
// Exit codes (also in every --help): 0 everything was read and scored; 1 an error (nothing to
// score, a group not scored, a file not read); 2 a usage error; 3 input lines were skipped
// (malformed or rejected records) and --allow-skipped was not given; 130 interrupted (watch).
import { emptyReadStats, type Notice, type ReadStats } from '../logs/log-layer';
import { flagBool, type CliIO, type ParsedArgs } from './args';
import { Progress } from './progress';
import { safeText } from '../logs/safe-text';

export const EXIT_SKIPPED = 3;

export class Outcome {
  errors = 0;
  readonly stats: ReadStats = emptyReadStats();
  readonly progress: Progress | undefined;
  private readonly allowSkipped: boolean;

  constructor(
    private readonly io: CliIO,
    a: ParsedArgs,
  ) {
    this.allowSkipped = flagBool(a, 'allow-skipped');
    const tty = (io.stderr as NodeJS.WriteStream).isTTY === true;
    if (tty || flagBool(a, 'progress')) this.progress = new Progress(io.stderr, this.stats, tty);
  }

  /** Prints a notice (above the progress line); error-level ones make the exit code 1. */
  readonly notice = (n: Notice): void => {
    if (n.level === 'error') this.errors++;
    const at = n.file ? `${n.file}${n.line ? `:${n.line}` : ''}` : '';
    const where = at && !n.message.startsWith(n.file!) ? `${at}: ` : '';
    this.progress?.clear();
    this.io.stderr.write(`consensus-lens: ${n.level === 'info' ? '' : `${n.level}: `}${safeText(where + n.message)}\n`);
  };

  /** Ends the progress line, prints the skipped-input summary, and returns the exit code. */
  finish(): number {
    this.progress?.end();
    const { lines, skipped } = this.stats;
    if (skipped > 0) {
      this.io.stderr.write(
        `consensus-lens: ${skipped} of ${lines} ${lines === 1 ? 'line' : 'lines'} skipped (each named above)${this.allowSkipped ? '' : `; exit ${EXIT_SKIPPED} (--allow-skipped accepts this)`}\n`,
      );
    }
    if (this.errors > 0) return 1;
    return skipped > 0 && !this.allowSkipped ? EXIT_SKIPPED : 0;
  }
}
