// Reading one file's records in a single pass (the one-shot reader and the tail both use this).
import { open, type FileHandle } from 'node:fs/promises';
import { errnoCode, errorMessage, errorName } from '../util/errors';
import { basename, dirname, relative } from 'node:path';
import { parseJsonLine } from './json.js';
import { readLineBatches } from './lines.js';
import { detectRecord, isJsonlName, isNotLogName, JsonlFileParser, looksBinary, PROBE_BYTES, sniff, torchDumpNotice, UNSUPPORTED_HINT } from './parse.js';
import { readWandbTable } from './wandb.js';
import { readTrlFile } from './trl.js';
import type { LogFormat, NoticeSink, ParsedRecord } from './log-types.js';

/** The run name of a file in a folder run: its folder relative to the root ('' → undefined). */
export function runOfFile(root: string, file: string): string | undefined {
  const rel = relative(root, dirname(file));
  return rel && !rel.startsWith('..') ? rel.split('\\').join('/') : undefined;
}

/** Folders verl and similar writers name by what they hold, never by the run: `rollout`, `val`, … */
const LEAF_DUMP_FOLDER = /^(trajectory|step_\d+|global_step_\d+_evals|eval_only|dumped_evals|rollouts?|rollout_data|val|valid|validation|validation_data|val_generations|generations|completions|train|eval|logs?|table|media|files)$/i;

/**
 * A display name for a run opened at `path`: its folder name, or — when that folder is one a writer
 * names by content (verl's `rollout/` or `val/`, TRL's `completions/`, W&B's `files/`) — the nearest
 * enclosing folder that is not, so a verl run is named after its run folder, never `rollout`.
 */
export function runLabel(path: string): string {
  let p = path.replace(/[\\/]+$/, '');
  let name = basename(p);
  if (/^(val|valid|validation|validation_data|val_generations)$/i.test(name)) return `${runLabel(dirname(p))} (validation)`;
  for (let i = 0; i < 4 && LEAF_DUMP_FOLDER.test(name); i++) {
    const parent = dirname(p);
    if (parent === p || !basename(parent)) break;
    p = parent;
    name = basename(p);
  }
  if (/^\d+\.jsonl$|^(train|val)_data_step\d+\.jsonl$|^completions_\d+\.parquet$|^(train|eval)_rollouts(_.*)?\.jsonl$|^eval_\d+\.jsonl$/i.test(name)) return runLabel(dirname(p));
  return name || path;
}

export interface FileReadResult {
  format: LogFormat | undefined;
  /** Byte offset just after the last consumed record (a trailing incomplete line is not consumed). */
  consumed: number;
  /** Number of the next line to read. */
  nextLine: number;
  size: number;
  /** Set when the file is not a log and was skipped quietly (a file of a run folder): why. */
  notLog: string;
  /** JSON Lines files: non-blank lines read, and how many of them were skipped (malformed or rejected). */
  lines: number;
  skipped: number;
}

/** What the first block of a file says it is, before any record is parsed. */
export type FileKind = 'parquet' | 'jsonl' | 'table' | 'empty' | { skip: string };

/** Classifies a file by name and first block (up to PROBE_BYTES): never reads past that block. */
export function classify(file: string, block: Buffer): FileKind {
  const kind = sniff(block.subarray(0, 64));
  if (kind === 'parquet') return 'parquet';
  if (kind === 'empty') return block.length < PROBE_BYTES || isOnlySpace(block) ? 'empty' : { skip: UNSUPPORTED_HINT };
  if (kind === 'unsupported') return { skip: looksBinary(block) ? 'not a text file' : UNSUPPORTED_HINT };
  if (looksBinary(block)) return { skip: 'not a text file' };
  if (/\.table\.json$/i.test(file)) return 'table';
  return 'jsonl';
}

function isOnlySpace(b: Buffer): boolean {
  for (const c of b) if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return false;
  return true;
}

/**
 * Reads the whole of `file` once, yielding batches of records. At the end a last line without a
 * newline is taken when it is a complete JSON object, else reported as incomplete. `inFolder`: the
 * file was found in a run folder, so a file that is not a log is skipped quietly (`result.notLog`
 * says why) rather than reported as an error. A read error (EIO, ESTALE on a network file system)
 * is an error notice naming the file; what was read before it is kept.
 */
export async function* readFileOnce(
  root: string,
  file: string,
  onNotice: NoticeSink,
  result: Partial<FileReadResult> = {},
  runOnce: Set<string> = new Set(),
  inFolder = false,
  /** Read on from here (a JSON Lines file read before up to `offset`, in `format`): the lines appended since. */
  resume?: { offset: number; line: number; format: LogFormat },
): AsyncGenerator<ParsedRecord[]> {
  const pickle = torchDumpNotice(file);
  if (pickle) {
    // never opened: one notice per run (a run holds one such file per step)
    result.notLog = 'a PyTorch pickle';
    if (!inFolder || !runOnce.has('torch-dump')) onNotice({ level: inFolder ? 'warning' : 'error', message: inFolder ? `${pickle} (and the run's other rollout_data/*.pt)` : pickle, file });
    runOnce.add('torch-dump');
    return;
  }
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch (err) {
    onNotice({ level: 'error', message: `${file}: cannot open (${errnoCode(err) ?? errorMessage(err)}); skipped`, file });
    return;
  }
  const quietOk = inFolder && !isJsonlName(file);
  try {
    const size = (await fh.stat()).size;
    result.size = size;
    const block = Buffer.alloc(Math.min(PROBE_BYTES, size));
    if (block.length) {
      const { bytesRead } = await fh.read(block, 0, block.length, 0);
      if (bytesRead < block.length) block.fill(32, bytesRead);
    }
    if (resume) {
      yield* readLines(fh, root, file, onNotice, result, runOnce, size, resume.offset, resume.line, resume.format);
      return;
    }
    if (inFolder && isNotLogName(file)) {
      result.notLog = 'not a log file name';
      return;
    }
    const kind = classify(file, block);
    if (kind === 'empty') {
      onNotice({ level: 'warning', message: `${file}: empty file, no records`, file });
      return;
    }
    if (typeof kind === 'object') {
      if (quietOk) result.notLog = kind.skip;
      else onNotice({ level: 'error', message: `${file}: unsupported file (${kind.skip}); skipped`, file });
      return;
    }
    if (kind === 'parquet' || kind === 'table') {
      try {
        const r = kind === 'parquet' ? await readTrlFile(file, runOfFile(root, file)) : await readWandbTable(file, runOfFile(root, file));
        result.format = r.format;
        result.consumed = size;
        if (r.rows === 0) onNotice({ level: 'warning', message: `${file}: ${r.what} with no rows`, file });
        for (const n of r.notices) {
          const k = `trl:${n.message.slice(n.message.indexOf(': ') + 2)}`; // once per run, not per step file
          if (runOnce.has(k)) continue;
          runOnce.add(k);
          onNotice(n);
        }
        yield r.records;
      } catch (err) {
        if (quietOk && kind === 'table' && errorName(err) === 'NotALog') result.notLog = errorMessage(err);
        else onNotice({ level: 'error', message: `${file}: unsupported or unreadable ${kind === 'parquet' ? 'parquet' : 'W&B table'} file (${errorMessage(err)}); skipped`, file });
      }
      return;
    }
    yield* readLines(fh, root, file, onNotice, result, runOnce, size, 0, 1, undefined, quietOk ? (_f, why) => void (result.notLog = why) : undefined);
  } catch (err) {
    const code = errnoCode(err) ?? errorMessage(err);
    onNotice({ level: 'error', message: `${file}: cannot read (${code}); skipped`, file });
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** The JSON Lines records of `file` from byte `start` (line `firstLine`) to `size`. */
async function* readLines(
  fh: FileHandle,
  root: string,
  file: string,
  onNotice: NoticeSink,
  result: Partial<FileReadResult>,
  runOnce: Set<string>,
  size: number,
  start: number,
  firstLine: number,
  only?: LogFormat,
  quiet?: (file: string, reason: string) => void,
): AsyncGenerator<ParsedRecord[]> {
  const parser = new JsonlFileParser(root, file, onNotice, only, runOnce, quiet);
  // read on after an earlier read: the format it found (the first lines, which tell, are not read again)
  if (start > 0 && only) parser.format = only;
  result.consumed = start;
  result.nextLine = firstLine;
  try {
    for await (const lines of readLineBatches(fh, start, firstLine, size)) {
      const out: ParsedRecord[] = [];
      for (const l of lines) {
        if (!l.terminated) {
          let complete = false;
          try {
            complete = l.text.trim() === '' || typeof parseJsonLine(l.text).value === 'object';
          } catch {
            complete = false;
          }
          if (!complete) {
            onNotice({ level: 'warning', message: `${file}:${l.line}: incomplete last line (no newline yet); not read`, file, line: l.line });
            continue;
          }
        }
        const rec = parser.line(l);
        if (rec) out.push(rec);
        result.consumed = l.end;
        result.nextLine = l.line + 1;
        if (parser.unsupported) break;
      }
      result.format = parser.format;
      if (out.length) yield out;
      if (parser.unsupported) break;
    }
  } catch (err) {
    const code = errnoCode(err) ?? errorMessage(err);
    onNotice({ level: 'error', message: `${file}: read error after line ${(result.nextLine ?? 1) - 1} (${code}); the rest of this file is skipped`, file, line: result.nextLine });
    result.format = parser.format;
    return;
  }
  // the file's summary notices ("empty", "k lines skipped in total") belong to a read of the whole file
  if (start === 0) parser.finish();
  result.format = parser.format;
  if (!parser.unsupported) {
    result.lines = parser.lines;
    result.skipped = parser.skipped;
  }
}

/**
 * What log format `file` holds, judged from its name and first block only (for finding runs in a
 * workspace): undefined when it is not a log we read. Never reads past PROBE_BYTES.
 */
export async function detectLogFile(file: string): Promise<LogFormat | undefined> {
  if (isNotLogName(file)) return undefined;
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const block = Buffer.alloc(PROBE_BYTES);
    const { bytesRead } = await fh.read(block, 0, block.length, 0);
    const head = block.subarray(0, bytesRead);
    const kind = classify(file, head);
    if (kind === 'parquet') return 'trl';
    if (kind === 'table') return /"columns"\s*:/.test(head.toString('utf8', 0, Math.min(head.length, 4096))) ? 'wandb' : undefined;
    if (kind !== 'jsonl') return undefined;
    for (const line of head.toString('utf8').split('\n').slice(0, 5)) {
      let v: unknown;
      try {
        v = parseJsonLine(line).value;
      } catch {
        continue;
      }
      if (typeof v !== 'object' || v === null || Array.isArray(v)) continue;
      const o = v as Record<string, unknown>;
      const f = detectRecord(o);
      if (f) return f;
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    await fh.close().catch(() => undefined);
  }
}
