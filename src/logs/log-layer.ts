// The log layer: run logs in, engine groups out (docs/contract.md#log-formats). Owned by src/logs; read this first.
//
// One pass (CLI score/sweep/report):
//   readRun(path, onNotice, { stdin? }) → AsyncIterable<Group>
//     path: a run folder (read recursively, hidden entries skipped, never through a link to a folder,
//     bounded: walk.ts), one log file, or '-' (native JSONL on stdin). Options: groundTruth
//     'auto' | 'use' | 'ignore'. Yields complete groups, texts included, in the order of each
//     group's first record. Group records stream with bounded memory; roll-out records wait for
//     their group without their text (read back by offset when the group is yielded). Throws only
//     when PATH itself cannot be read; every other problem is a Notice naming file and line.
//
// Finding runs: detectLogFile(path) → LogFormat | undefined, from a file's name and first block
// (a workspace scan can use it to recognise every format below without reading whole files).
//
// Followable index (extension, `watch`):
//   RunIndex.open(path, { follow, poll?, pollMs?, idleMs?, safetyScanMs?, onNotice, onProgress?, onStart?, streamMs?, signal?, persist? })
//     → RunIndex (after the initial read; onProgress reports it, signal cancels it: AbortError;
//     onStart(index) runs before it: listeners subscribed there get its groups as they are read,
//     every streamMs and after each file; persist: a saved index, follow/persist.ts — .save(),
//     .persisted, .restoredExtras(tag))
//     .mode 'watch' | 'poll' | 'static'    (an info notice says which, and why polling)
//     .groups(): GroupHead[]               first-record order; per group (entries.ts): key, run, step,
//                                          questionId, groundTruth (diagnostic), stream ('validation' or
//                                          absent), outcomeChecks, n, complete, version (process-wide,
//                                          never goes back: key every cache of derived data by it),
//                                          origin, format, firstSource — no roll-outs (`cold`: restored
//                                          from a persisted index, read back by `.group(key)`)
//     rolloutsOf(entry): RolloutEntry[]    the roll-outs (meanLogprob, reward, answer if pre-extracted,
//                                          verification, sampleIdx, extra, source) — no text; a call
//                                          that builds them, never a property: count with `n`
//     .head(key): GroupHead / .group(key): GroupEntry (with its prompt and roll-outs) / .size
//     .sizes(): Iterable<{ key, step, n }>  each group's, in order, without building its head (a
//                                          cold head is a row of columns: group-table.ts)
//     .onDidChange(({ removed, added, completed, changed, grown, rearranged }) => …) → { dispose() }
//                                          grown: open groups whose size changed; rearranged: the
//                                          groups were put in a new order, not only appended to
//     .loadGroup(key): Promise<Group>      the engine's Group, texts read back from disk by offset
//     .readRolloutText(source, version?)   one roll-out's text (group-record roll-outs carry `item`)
//     .confidence()                        roll-outs with a confidence c_i, and why not (per format)
//     .settled() / .refresh() / .close()
// Both readers assemble groups with one assembler (assemble.ts: identity, versions, completion
// policy, duplicates, late roll-outs, streams, size warnings — its header states the rules).
//   Completion rules, tail rules and modes: see run-index.ts's header.
//
// Formats are detected per file by content: native consensus-lens/v1 (native.ts), verl dumps
// (verl.ts: uid group — V1 `rsplit('_', 2)`, a session's final output — or identical input per
// step; `gts` lists; validation dumps a stream of their own; TTRL's gts/acc/extracted_gt never
// ground truth), TRL completions parquet (trl.ts, read with hyparquet; rewards = sum of the
// reward-function columns, never the log_extra ones), W&B table files (wandb.ts), NeMo RL step
// logs (nemo.ts: mean generation log-prob as confidence), prime-rl step roll-outs (primerl.ts:
// verifiers RolloutOutput lines, grouped by example_id), SkyRL evaluation dumps (skyrl.ts: grouped
// by prompt, the validation stream), miles trajectory dumps (miles.ts: grouped by group_index);
// slime / miles `rollout_data/*.pt` pickles are never opened (a notice names the converter).
// docs/log-formats.md records the writer
// code each follows. In a run folder a file that is not a log is skipped quietly (one summary
// notice); named alone, an unsupported file is an error-level notice naming it, and is skipped. A
// read error (EIO, ESTALE) is an error naming the file; the rest of the run is read. A malformed line is a warning
// with file:line (the rest loads); NaN/Infinity tokens, invalid UTF-8 and mistyped optional fields
// are read as missing / U+FFFD and reported once per run. Notice messages name their file and line
// themselves; `file`/`line` are there for navigation.
export type { Notice, NoticeSink, LogFormat, GroupKey, RolloutEntry, RolloutSource } from './log-types.js';
export { groupKey } from './log-types.js';
export { KeyIndex } from './key-index.js';
export { readRun, emptyReadStats, type ReadRunOptions, type ReadStats } from './read-run.js';
export { streamOf, type CompletionPolicy } from './assemble.js';
export { rolloutsOf, rolloutSourceOf, rolloutsMaterialised, nextVersion, type Packed } from './entries.js';
export type { GroupSize } from './group-table.js';
export { detectLogFile, runLabel } from './records.js';
export { listRunFiles, unsafeRunRoot, WALK_MAX_DEPTH, WALK_MAX_FILES, type WalkOptions } from './walk.js';
export { nemoMeanLogprob } from './nemo.js';
export { readRolloutText, readRolloutObject } from './texts.js';
export { RunIndex, SAVED_EXTRA, entryToGroup, type ConfidenceSummary, type GroupEntry, type GroupHead, type RunChange, type RunIndexOptions, type SaveExtras, type RunProgress } from './run-index.js';
