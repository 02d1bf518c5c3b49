// The progress line of long commands: on stderr, rewritten in place on a terminal (at most ~8 times
// a second) and erased at the end; with --progress on a pipe, a plain line every few seconds.
import type { ReadStats } from '../logs/log-layer';

const mib = (b: number): string => `${(b / 1048576).toFixed(b < 10 * 1048576 ? 1 : 0)} MiB`;

function duration(s: number): string {
  if (!Number.isFinite(s) || s < 0) return '?';
  if (s < 60) return `${Math.ceil(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}

export class Progress {
  groups = 0;
  /** Settings done of all (sweep, from the run's cache), when set. */
  settings?: { done: number; of: number };
  private shown = false;
  private last = 0;
  private readonly interval: number;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly stats: ReadStats,
    private readonly tty: boolean,
    /** When the work began (ms since the epoch); the rate and time left count from it. */
    private readonly start = Date.now(),
  ) {
    this.interval = tty ? 120 : 2000;
  }

  /** One more group done (or `k` more). */
  tick(k = 1): void {
    this.groups += k;
    const now = Date.now();
    if (now - this.last < this.interval) return;
    this.last = now;
    this.draw(now);
  }

  line(now = Date.now()): string {
    const s = (now - this.start) / 1000;
    const { bytes, totalBytes } = this.stats;
    const rate = s > 0 ? this.groups / s : 0;
    const parts = [`${this.groups} ${this.groups === 1 ? 'group' : 'groups'}`];
    if (this.settings) parts.push(`setting ${this.settings.done} of ${this.settings.of}`);
    if (totalBytes > 0) parts.push(`${mib(bytes)} of ${mib(totalBytes)} (${Math.min(100, (100 * bytes) / totalBytes).toFixed(0)}%)`);
    else if (bytes > 0) parts.push(mib(bytes));
    parts.push(`${rate.toFixed(rate < 10 ? 1 : 0)} groups/s`);
    if (totalBytes > 0 && bytes > 0 && bytes < totalBytes) parts.push(`${duration(((totalBytes - bytes) * s) / bytes)} left`);
    return `consensus-lens: ${parts.join(', ')}`;
  }

  private draw(now: number): void {
    const text = this.line(now);
    if (this.tty) {
      this.out.write(`\r\x1b[2K${text}`);
      this.shown = true;
    } else this.out.write(text + '\n');
  }

  /** Erases the line (before a notice is printed above it). */
  clear(): void {
    if (this.tty && this.shown) {
      this.out.write('\r\x1b[2K');
      this.shown = false;
    }
  }

  /** The end: the terminal line disappears; a pipe gets a last line. */
  end(): void {
    if (this.tty) this.clear();
    else if (this.groups > 0) this.out.write(this.line() + ' (done)\n');
  }
}
