// The shapes of RunIndex (run-index.ts): its options, its change events, what a save writes beside
// the groups, how the saved index served an open, the initial read's progress.
import type { GroupEntry } from './entries.js';
import type { GroupKey, LogFormat, Notice } from './log-types.js';

export interface RunChange {
  removed: GroupKey[];
  added: GroupKey[];
  completed: GroupKey[];
  changed: GroupKey[];
  /** Groups still open whose size changed (nothing else to redo for them: they were never complete). */
  grown: GroupKey[];
  /** The groups were put in a new order (a file re-read, a new file sorting before others): not only appended to. */
  rearranged: boolean;
}

/** `Index`: the index `onStart` is given (run-index.ts names it: RunIndexOptions; the layers below take any). */
export interface RunIndexOptionsOf<Index> {
  follow: boolean;
  /** Force polling (network file systems). */
  poll?: boolean;
  onNotice: (n: Notice) => void;
  pollMs?: number;
  idleMs?: number;
  safetyScanMs?: number;
  /** Progress of the initial read (throttled to ~10 per second, and once at the end). */
  onProgress?: (p: RunProgress) => void;
  /**
   * Called with the index before its initial read: a listener subscribed here (`onDidChange`) sees
   * the initial read's groups as they are read — in batches, after each file and every `streamMs`
   * (default 1000) within one — not only once `open` resolves.
   */
  onStart?: (index: Index) => void;
  streamMs?: number;
  /** Bytes read from a log file at a time (default 1 MiB; tests make it small, so that a read streams, and saves, part way through a file). */
  readBlock?: number;
  /** Cancels the initial read: `open` then rejects with an AbortError and nothing keeps running. */
  signal?: AbortSignal;
  /** 'ignore': logged ground truth is dropped as it is read. Default 'auto'. */
  groundTruth?: 'auto' | 'use' | 'ignore';
  /**
   * A persisted index (follow/persist.ts; a followed run only): restored at open when valid (files
   * unchanged or appended to are not read again), written by `save`. `key`: see cacheKey.
   * `lightIn`: each saved extra's light form as it is decoded, turned at once into what its owner
   * keeps (the store: a row of its summary columns), so that a huge run's restore leaves no object
   * per group behind to collect; `restoredExtras` then gives what it returned.
   */
  persist?: PersistOptions;
}

export interface PersistOptions {
  file: string;
  key: string;
  distrust?: string;
  lightIn?: (x: unknown) => unknown;
  /** A record's light forms packed by `SaveExtras.lightPack` → what `restoredExtras` gives for each of its groups. */
  lightUnpack?: (p: unknown) => unknown[];
}

/** What a save writes beside the groups (the extension: the explorer's question summaries). */
export interface SaveExtras {
  /** What the extras were computed for; restored only under the same tag. */
  tag: string;
  /** A group's extra, or SAVED_EXTRA for the one saved with it before (under this tag). */
  of: (e: GroupEntry) => unknown;
  /** The light form of an extra, read at open with the groups' heads (the full one stays with the group). */
  light?: (x: unknown) => unknown;
  /** One saved record's light forms packed into one value (follow/persist.ts `SaveSource.lightPack`). */
  lightPack?: (xs: unknown[]) => unknown;
  /**
   * The light form of the extra saved with a group, for a group whose `of` is SAVED_EXTRA (the
   * one saved before, under this tag): with it, a record whose groups are all unchanged and all
   * SAVED_EXTRA is copied, not written again.
   */
  savedLight?: (e: GroupEntry) => unknown;
  /** Whether `of` would give SAVED_EXTRA for the group, known without building it (false when unsure): what lets a record be copied. */
  unchanged?: (key: GroupKey) => boolean;
  /** Run-level data, restored under the same tag. */
  run?: unknown;
}

/** How the persisted index served the open. */
export interface PersistedOpen {
  state: 'none' | 'restored' | 'rebuilt';
  /** Files taken from it (unchanged or appended to), and read again from scratch. */
  trusted: number;
  reread: number;
  /** Why it was not used ('rebuilt'). */
  why?: string;
}

export interface RunProgress {
  bytesRead: number;
  totalBytes: number;
  filesRead: number;
  totalFiles: number;
  groups: number;
}

export interface ConfidenceSummary {
  rollouts: number;
  /** Roll-outs with a mean token log-prob (c_i). */
  withConfidence: number;
  formats: LogFormat[];
  /** Why confidences are missing (all or some), or null when every roll-out has one. */
  why: string | null;
}

/** Why a format's roll-outs come without confidence. */
export const NO_CONFIDENCE: Record<LogFormat, string> = {
  native: 'the log has no mean_logprob / token_logprobs',
  verl: 'verl dumps carry no log-probs (the consensus_lens helpers add rollout_log_probs)',
  trl: 'TRL completions logs carry no log-probs',
  wandb: 'W&B tables carry no log-probs',
  'nemo-rl': 'the NeMo RL log has no generation_logprobs',
  'prime-rl': 'the prime-rl roll-outs have no trajectory completion_logprobs',
  skyrl: 'SkyRL evaluation dumps carry no log-probs',
  miles: 'miles trajectory dumps carry no log-probs (they are in its dashboard_columns parquet, not read)',
};
