// A followed run as the host's run model keeps it (`RunEntry`), the store's options and events:
// the shapes every part of src/extension/model reads (run-store.ts wires the parts). Pure Node:
// no 'vscode'.
import type { GroupHealth, OperatorId, OutcomeReplay, PreparedGroup, RunHealth } from '../../engine';
import type { GroupEntry, GroupKey, Notice, RunIndex, RunProgress } from '../../logs/log-layer';
import type { RunItem } from '../workers/runtime';
import type { QuestionSummaries } from './summaries';
import type { StepKeys } from './step-keys';
import type { StoredGroup } from './scoring';

export interface RunEntry {
  id: string;
  path: string;
  label: string;
  /** Why the run is followed. */
  origin: 'settings' | 'workspace' | 'opened';
  index: RunIndex | null;
  /** Steps ascending; each with its question keys (the index's group keys, as ids: step-keys.ts) in first-record order. */
  steps: Map<number, StepKeys>;
  /** Groups in the run (every step's questions). */
  groups: number;
  /** Keyed by the index's group key, valid for the group's version only (src/logs/entries.ts). */
  prepared: Map<GroupKey, { version: number; group: StoredGroup }>;
  /**
   * Groups that could not be prepared → the version that failed: reported once, and the background
   * scoring leaves them until their roll-outs change (opening one tries again).
   */
  unprepared: Map<GroupKey, number>;
  /** Scored questions' summaries (light ones in columns: summaries.ts). */
  summaries: QuestionSummaries;
  /**
   * Per scored group that MS-TTRL's outcome cache concerns (it has outcome checks, or its question
   * had a cache when it was scored): the question's cache it was scored with (`seen`, a
   * fingerprint) and what its checks feed the cache. The background scoring walks the run in
   * order and scores such a group again only when the cache before it is not `seen`.
   */
  outcomes: Map<GroupKey, { questionId: string; seen: string; replay?: OutcomeReplay }>;
  notices: Notice[];
  loading: boolean;
  error: string | null;
  /** Bumped on every change (the status bar and tests compare it). */
  version: number;
  rollouts: number;
  /** The last step that received a group. */
  latestStep: number | null;
  /** The first read's progress, while it runs (its groups appear as they are read). */
  progress?: RunProgress;
  /** The store's growth clock when groups were last added to the run after it was first read
   * (0: it has not grown since). The run with the highest is the one being written. */
  grownAt: number;
  /** `version` when the run's index was last saved or restored as it is (see StoreOptions.persistDir). */
  savedVersion?: number;
  /** The run's health as saved with its index, while the run is as restored (the status bar starts from it). */
  savedHealth?: { size: number; health: RunHealth };
}

export type StoreEvent = { kind: 'runs' } | { kind: 'run'; runId: string; changed: string[] } | { kind: 'summaries'; runId: string };

export interface StoreOptions {
  /** The operator the user named (undefined: each group's logged one, else majority). */
  configuredOperator: () => OperatorId | undefined;
  params: () => Record<string, number>;
  log?: (message: string) => void;
  /** Information for the output (how a run was opened). */
  info?: (message: string) => void;
  /** Passed to RunIndex (tests use small values). */
  pollMs?: number;
  streamMs?: number;
  idleMs?: number;
  /** Follow files (default true). */
  follow?: boolean;
  /** The `consensusLens.groundTruth` setting: 'ignore' drops logged ground truth as runs are read. */
  groundTruth?: () => 'auto' | 'use' | 'ignore';
  /**
   * Prepares a group off the host thread (the what-if engine's workers, under the run's shard key
   * and cache: `WhatIfEngine.prepare`); without it groups are prepared in-process (tests).
   * `keep`: a view's group (previews wanted); the background scoring's otherwise.
   */
  prepare?: (runId: string, item: RunItem, opts: { keep: boolean }) => Promise<{ prepared: PreparedGroup; previews: string[] }>;
  /**
   * The folder of persisted indexes (VS Code's storage; undefined: none): a run's index and its
   * questions' summaries are saved there once scored, and a second open of the run reads them
   * instead of its logs (src/logs/follow/persist.ts).
   */
  persistDir?: () => string | undefined;
  /** Quiet time after the last change before a run's index is saved again (ms; default 5000). */
  saveDelayMs?: number;
  /**
   * Groups held in memory and not yet saved — read and not saved (their roll-out columns), or
   * scored and not saved (their summaries with their health records), ~3 KB each — past which a
   * run's index is saved at once, without waiting for the run to be quiet (a checkpoint; default
   * 16,384): a first open of a huge run then holds a bounded part of it, not all of it until its end.
   */
  checkpointGroups?: number;
  /** Bytes read from a log file at a time (RunIndexOptions.readBlock; tests). */
  readBlock?: number;
  /** Analyses a run's health off the host thread (the what-if engine's workers); without it, in-process (tests). */
  analyse?: (records: readonly GroupHealth[]) => Promise<RunHealth>;
}

export const questionKeyString = (step: number, questionId: string): string => `${step}\u0000${questionId}`;

/** The question id shown for an index entry (sub-runs of a folder prefix their folder). */
export function displayQuestionId(e: Pick<GroupEntry, 'run' | 'questionId'>): string {
  return e.run ? `${e.run}/${e.questionId}` : e.questionId;
}
