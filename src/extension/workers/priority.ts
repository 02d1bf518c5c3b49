// The what-if workers are background work next to the editor's extension host: on a machine with
// few cores they compete with the host's main thread (and the window) for the CPU, and every
// millisecond the host's thread waits for a core is a millisecond of event-loop lag. On Linux a
// thread has its own nice value, so each worker thread lowers its own priority: the host's thread
// (and anything else at the default priority) runs first, the workers use the CPU that is left.
// Elsewhere a priority is per process, and nothing is changed.
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** The nice value the workers run at (0 is the default; 19 the lowest priority). */
export const WORKER_NICE = 10;

/** The calling thread's id (Linux), or undefined. */
export function threadId(): number | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    // "/proc/thread-self" links to "<pid>/task/<tid>" of the thread that reads it
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Lowers the calling thread's priority to WORKER_NICE (never raises it); returns the nice value it
 * runs at, or undefined where a thread's priority cannot be set (not Linux).
 */
export function lowerThreadPriority(): number | undefined {
  const tid = threadId();
  if (tid === undefined) return undefined;
  try {
    if (getPriority(tid) < WORKER_NICE) setPriority(tid, WORKER_NICE);
    return getPriority(tid);
  } catch {
    return undefined;
  }
}
