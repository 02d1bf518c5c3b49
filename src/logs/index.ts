// The log layer: run logs in, engine groups out (SPEC §2). Owned by src/logs; read this first.
//
// One pass (CLI score/sweep/report):
//   readRun(path, onNotice, { stdin? }) → AsyncIterable<Group>
//     path: a run folder (read recursively, hidden entries skipped, symlink loops cut), one log file,
//     or '-' (native JSONL on stdin). Yields complete groups, texts included, in the order of each
//     group's first record. Group records stream with bounded memory; roll-out records wait for
//     their group without their text (read back by offset when the group is yielded). Throws only
//     when PATH itself cannot be read; every other problem is a Notice naming file and line.
//
// Followable index (extension, `watch`):
//   RunIndex.open(path, { follow, poll?, pollMs?, idleMs?, safetyScanMs?, onNotice, onProgress?, signal? })
//     → RunIndex (after the initial read; onProgress reports it, signal cancels it: AbortError)
//     .mode 'watch' | 'poll' | 'static'    (an info notice says which, and why polling)
//     .groups(): GroupEntry[]              first-record order; per group: key, run, step, questionId,
//                                          prompt, groundTruth (diagnostic), outcomeChecks, n,
//                                          complete, revision, origin, format, firstSource, and
//                                          rollouts: RolloutEntry[] (meanLogprob, reward, answer if
//                                          pre-extracted, verification, sampleIdx, extra, source) — no text
//     .group(key) / .size
//     .onDidChange(({ removed, added, completed, changed }) => …) → { dispose() }
//     .loadGroup(key): Promise<Group>      the engine's Group, texts read back from disk by offset
//     .readRolloutText(source)             one roll-out's text (group-record roll-outs carry `item`)
//     .settled() / .refresh() / .close()
//   Completion rules, tail rules and modes: see run-index.ts's header.
//
// Formats are detected per file by content: native consensus-lens/v1 (native.ts), verl dumps
// (verl.ts: uid prefix or identical input per step; TTRL's gts/acc/extracted_gt never ground truth),
// TRL completions parquet (trl.ts, read with hyparquet; rewards = sum of the reward columns). An
// unsupported file is an error-level notice naming it, and is skipped. A malformed line is a warning
// with file:line (the rest loads); NaN/Infinity tokens, invalid UTF-8 and mistyped optional fields
// are read as missing / U+FFFD and reported once per run. Notice messages name their file and line
// themselves; `file`/`line` are there for navigation.
export type { Notice, NoticeSink, LogFormat, GroupKey, RolloutEntry, RolloutSource } from './types.js';
export { groupKey } from './types.js';
export { readRun, streamName, type ReadRunOptions } from './read-run.js';
export { runLabel } from './records.js';
export { listRunFiles, unsafeRunRoot, WALK_MAX_DEPTH, WALK_MAX_FILES, type WalkOptions } from './walk.js';
export { nemoMeanLogprob } from './nemo.js';
export { readRolloutText } from './texts.js';
export { RunIndex, entryToGroup, type ConfidenceSummary, type GroupEntry, type RunChange, type RunIndexOptions, type RunProgress } from './run-index.js';
