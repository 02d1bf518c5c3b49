// The log layer: run logs in, engine groups out (SPEC §2).
//
//   readRun(path, onNotice)   one pass over a run (folder, file or '-' for stdin native JSONL),
//                             yielding complete `Group`s with texts, in the order of each group's
//                             first record; bounded memory for group-record files.
//   RunIndex.open(path, opts) a followable index for the extension and `watch` (run-index.ts).
//   readRolloutText(source)   a roll-out's text, read back from disk by its record's byte range.
//
// Formats are detected per file by content: native consensus-lens/v1 (native.ts), verl dumps
// (verl.ts), TRL completions parquet (trl.ts). Problems are reported as `Notice`s naming file and
// line; nothing already read is dropped because of a later bad line.
export type { Notice, NoticeSink, LogFormat, GroupKey, RolloutEntry, RolloutSource } from './types.js';
export { groupKey } from './types.js';
export { readRun, type ReadRunOptions } from './read-run.js';
export { readRolloutText } from './texts.js';
export { RunIndex, entryToGroup, type GroupEntry, type RunChange, type RunIndexOptions } from './run-index.js';
