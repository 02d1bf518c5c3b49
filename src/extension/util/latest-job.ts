// Debounced, single-flight recomputation for a view that shows the latest state of something that
// keeps changing (a growing run, new settings): `schedule(ms)` runs the job after `ms`, a newer
// call replacing a pending one; while the job runs, further runs collapse into one that starts
// when it ends (so the view ends on the newest state, and two computations never overlap).
// Pure: no 'vscode'.

export class LatestJob {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private busy = false;
  private again = false;
  private disposed = false;

  /** `onError` receives what the job throws (the job keeps being scheduled after a failure). */
  constructor(
    private readonly job: () => Promise<void>,
    private readonly onError: (e: unknown) => void = () => {},
  ) {}

  /** Whether the job is running now. */
  get running(): boolean {
    return this.busy;
  }

  /** Runs the job in `ms` milliseconds (replacing a pending start); if it is running, once more after it. */
  schedule(ms: number): void {
    if (this.disposed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run();
    }, ms);
  }

  private async run(): Promise<void> {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    try {
      await this.job();
    } catch (e) {
      this.onError(e);
    } finally {
      this.busy = false;
      if (this.again) {
        this.again = false;
        this.schedule(0);
      }
    }
  }

  /** No further runs start (one running now finishes). */
  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
