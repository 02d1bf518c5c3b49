// The extension host's responsiveness, measured: the event loop's delay (perf_hooks'
// monitorEventLoopDelay, 10 ms resolution) since activation or since the last reset. Every CPU-heavy
// step (answer extraction, TF-IDF, sweeps) runs on worker threads; this is how that is checked —
// the e2e suite loads a run of degenerate roll-outs and reads the maximum here
// (*Consensus Lens: Show Extension Host Event-Loop Lag*, which also writes it to the output).
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export class LagMonitor {
  private readonly h: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private since = Date.now();

  constructor() {
    this.h.enable();
  }

  /** Max and mean delay in ms since the last reset (the histogram reports nanoseconds). */
  read(): { maxMs: number; meanMs: number; seconds: number } {
    const max = this.h.count ? this.h.max / 1e6 : 0;
    const mean = this.h.count ? this.h.mean / 1e6 : 0;
    return { maxMs: Math.round(max * 10) / 10, meanMs: Math.round(mean * 10) / 10, seconds: Math.round((Date.now() - this.since) / 100) / 10 };
  }

  reset(): void {
    this.h.reset();
    this.since = Date.now();
  }

  dispose(): void {
    this.h.disable();
  }
}
