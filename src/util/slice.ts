// A long pass on the extension host's thread (restoring a saved index, arranging a run's groups)
// yields to the event loop between slices of work, so no window waits longer than a slice.

/** The host's slice of uninterrupted work, in milliseconds. */
export const SLICE_MS = 8;

/** A pass's clock: `if (slice.due) await slice.next()` between items. */
export class TimeSlice {
  private at = performance.now();
  constructor(private readonly ms = SLICE_MS) {}

  /** The slice is used up. */
  get due(): boolean {
    return performance.now() - this.at > this.ms;
  }

  /** Yields to the event loop, then starts a new slice. */
  async next(): Promise<void> {
    await new Promise((r) => setImmediate(r));
    this.at = performance.now();
  }
}
