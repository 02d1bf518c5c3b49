// Incremental reading of one file of a run: from the byte after its last consumed record to the
// end, records handed to the group assembler.
//
// Tail rules. A last line without a newline is consumed only once it is a complete JSON object (a
// writer mid-line leaves a prefix that does not parse); otherwise it waits (`partial`). A malformed
// complete line is skipped and reported once (file:line). A TRL parquet or W&B table file is re-read
// whole when it changes; while it does not parse (being written) it is retried silently.
//
// The index runs on the editor's extension host: one line can be megabytes (a group record of 64
// long roll-outs), so a line of 64 KiB or more is read as bytes and scanned without decoding its
// texts (skeleton.ts), in steps, and the reader yields to the event loop whenever a slice of work
// has taken a slice (SLICE_MS, util/slice.ts) while following: the window is never blocked for longer. (A short line is
// decoded and parsed whole: that is cheaper, and a fraction of a millisecond.)
import type { Stats } from 'node:fs';
import { errnoCode, errorMessage } from '../../util/errors';
import { open } from 'node:fs/promises';
import { parseJsonLine } from '../json.js';
import { decodeLine, readRawLineBatches } from '../lines.js';
import { isJsonlName, isNotLogName, JsonlFileParser, lineStart, PROBE_BYTES, torchDumpNotice, UNSUPPORTED_HINT } from '../parse.js';
import { isBlankLine, skeletonOf, type Skeleton } from '../skeleton.js';
import { classify, runOfFile } from '../records.js';
import { readTrlFile } from '../trl.js';
import { readWandbTable } from '../wandb.js';
import type { Notice, ParsedRecord } from '../log-types.js';
import type { Change } from '../assemble.js';
import { bufferHandle, HEAD, type FileLike, type FileState } from './files.js';
import { TimeSlice } from '../../util/slice';

/** Lines at least this long are scanned as bytes, their texts left out (skeleton.ts). */
const SKELETON_MIN = 64 * 1024;

export interface ReadContext {
  folderRoot: string;
  isDir: boolean;
  follow: boolean;
  notice: (n: Notice) => void;
  runOnce: Set<string>;
  /** Files of the run folder that are not logs (summed up in one notice after each scan). */
  notLogs: Set<string>;
  /** Hands a record to the assembler. */
  add(rec: ParsedRecord, fs: FileState, ch: Change): void;
  /** A file's records are to be dropped (it went away, or is read again from the start). */
  drop(path: string, ch: Change, why: 'deleted' | 'rewritten'): void;
  /** Bytes read during the initial read (progress; throws AbortError when cancelled). */
  progress?(bytes: number): void;
  /**
   * A save is waiting for the read to reach a record boundary (the index's `save` during its
   * initial read): `checkpoint` runs it there, with `fs` as read so far.
   */
  saveWaiting?(fs: FileState): boolean;
  /** Bytes read at a time (the reader's default when unset). */
  block?: number;
  checkpoint?(fs: FileState): Promise<void>;
}

/** The parser of a JSON-lines file of the run (a file of a folder not named *.jsonl may quietly turn out not to be a log). */
export function parserFor(c: ReadContext, fs: FileState): JsonlFileParser {
  const quietOk = c.isDir && !isJsonlName(fs.path);
  return new JsonlFileParser(c.folderRoot, fs.path, c.notice, undefined, c.runOnce, quietOk ? () => {
    fs.notLog = true;
    c.notLogs.add(fs.path);
  } : undefined);
}

/** Reads `fs`'s file from `fs.consumed` to its end (or the whole of it, preloaded when small). */
export async function readFileIncrement(c: ReadContext, fs: FileState, st: Stats, ch: Change, preloaded?: Buffer): Promise<void> {
  const pickle = fs.format === undefined && !fs.parser ? torchDumpNotice(fs.path) : undefined;
  if (pickle) {
    // never opened (parse.ts torchDumpNotice): one notice per run
    if (!c.isDir || !c.runOnce.has('torch-dump')) c.notice({ level: c.isDir ? 'warning' : 'error', message: c.isDir ? `${pickle} (and the run's other rollout_data/*.pt)` : pickle, file: fs.path });
    c.runOnce.add('torch-dump');
    fs.unsupported = fs.notLog = true;
    fs.size = st.size;
    fs.mtimeMs = st.mtimeMs;
    fs.ctimeMs = st.ctimeMs;
    return;
  }
  let fh: FileLike;
  try {
    fh = preloaded ? bufferHandle(preloaded, st) : await open(fs.path, 'r');
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return void c.drop(fs.path, ch, 'deleted');
    c.notice({ level: 'error', message: `${fs.path}: cannot open (${errnoCode(err)}); skipped`, file: fs.path });
    fs.unsupported = true;
    return;
  }
  try {
    const fst = await fh.stat();
    const size = fst.size;
    if (fst.ino !== fs.ino) {
      // replaced between stat and open: start over with the new file
      fs.ino = fst.ino;
      fs.dev = fst.dev;
    }
    if (fs.head.length < HEAD && size > fs.head.length) {
      const b = Buffer.alloc(Math.min(HEAD, size));
      const { bytesRead } = await fh.read(b, 0, b.length, 0);
      fs.head = b.subarray(0, bytesRead);
    }
    const settle = () => {
      fs.size = size;
      fs.mtimeMs = fst.mtimeMs;
      fs.ctimeMs = fst.ctimeMs;
    };
    if (fs.format === undefined && !fs.parser) {
      const quietOk = c.isDir && !isJsonlName(fs.path);
      const notLog = () => {
        fs.unsupported = fs.notLog = true;
        c.notLogs.add(fs.path);
        settle();
      };
      if (c.isDir && isNotLogName(fs.path)) return notLog();
      const probe = Buffer.alloc(Math.min(PROBE_BYTES, size));
      const { bytesRead: pr } = await fh.read(probe, 0, probe.length, 0);
      const k = classify(fs.path, probe.subarray(0, pr));
      if (typeof k === 'object' && quietOk) return notLog();
      if (k === 'empty') {
        if (!c.follow) c.notice({ level: 'warning', message: `${fs.path}: empty file, no records`, file: fs.path });
        settle();
        if (fs.head.length === size) fs.head = Buffer.alloc(0); // only whitespace so far: keep re-sniffing
        return;
      }
      if (typeof k === 'object') {
        c.notice({ level: 'error', message: `${fs.path}: unsupported file (${k.skip ?? UNSUPPORTED_HINT}); skipped`, file: fs.path });
        fs.unsupported = true;
        return settle();
      }
      if (k === 'parquet' || k === 'table') fs.format = k === 'table' ? 'wandb' : 'trl';
      else
        fs.parser = parserFor(c, fs);
    }
    settle();
    if (fs.format === 'trl' || fs.format === 'wandb') return void (await readTable(c, fs, ch));
    await readLines(c, fs, fh, size, ch);
  } finally {
    await fh.close();
  }
}

async function readLines(c: ReadContext, fs: FileState, fh: FileLike, size: number, ch: Change): Promise<void> {
  const parser = fs.parser!;
  fs.partial = false;
  const slice = new TimeSlice();
  const pause = async (): Promise<void> => {
    if (c.follow && slice.due) await slice.next();
  };
  for await (const lines of readRawLineBatches(fh, fs.consumed, fs.nextLine, size, c.block)) {
    c.progress?.(lines[lines.length - 1].end - lines[0].offset);
    for (const raw of lines) {
      await pause();
      const long = raw.bytes.length >= SKELETON_MIN;
      const l = long ? undefined : decodeLine(raw);
      const blank = l ? l.text.trim() === '' : isBlankLine(raw.bytes);
      let sk: Skeleton | null = null;
      if (!l && !blank) {
        const scan = skeletonOf(raw.bytes, lineStart(raw));
        for (let r = scan.next(); ; r = scan.next()) {
          if (r.done) {
            sk = r.value;
            break;
          }
          await pause();
        }
      }
      if (!raw.terminated) {
        // complete once it is a JSON object (a byte-order mark makes it no JSON here: JSON.parse
        // of the text rejects it)
        let complete = blank;
        if (!complete && (l || (sk && lineStart(raw) === 0))) {
          try {
            const v = parseJsonLine(l ? l.text : sk!.text).value;
            complete = typeof v === 'object' && v !== null;
          } catch {
            complete = false;
          }
        }
        if (!complete) {
          if (!c.follow) c.notice({ level: 'warning', message: `${fs.path}:${raw.line}: incomplete last line (no newline yet); not read`, file: fs.path, line: raw.line });
          fs.partial = true;
          continue; // wait for the rest of the line
        }
        if (blank) continue;
      }
      const rec = l ? parser.line(l) : parser.lineBytes(raw, sk);
      fs.consumed = raw.end;
      fs.nextLine = raw.line + 1;
      if (rec) c.add(rec, fs, ch);
      if (parser.unsupported) break;
      if (c.saveWaiting?.(fs)) await c.checkpoint!(fs);
    }
    if (parser.unsupported) break;
  }
  fs.format = parser.format;
  if (parser.unsupported) fs.unsupported = true;
  if (!c.follow) parser.finish();
  else if (fs.consumed > 0) {
    const n = Math.min(HEAD, fs.consumed);
    const b = Buffer.alloc(n);
    const { bytesRead } = await fh.read(b, 0, n, fs.consumed - n);
    fs.tail = bytesRead === n ? b : undefined;
  }
}

/** A TRL parquet or W&B table file, read whole (it is rewritten whole): what it gave before is dropped first. */
async function readTable(c: ReadContext, fs: FileState, ch: Change): Promise<void> {
  if (fs.consumed > 0) c.drop(fs.path, ch, 'rewritten');
  try {
    const run = runOfFile(c.folderRoot, fs.path);
    const r = fs.format === 'wandb' ? await readWandbTable(fs.path, run) : await readTrlFile(fs.path, run);
    for (const n of r.notices) {
      const k = `trl:${n.message.slice(n.message.indexOf(': ') + 2)}`;
      if (c.runOnce.has(k)) continue;
      c.runOnce.add(k);
      c.notice(n);
    }
    fs.parquetPending = undefined;
    fs.consumed = fs.size;
    for (const rec of r.records) c.add(rec, fs, ch);
    if (r.rows === 0 && !c.follow) c.notice({ level: 'warning', message: `${fs.path}: ${r.what} with no rows`, file: fs.path });
  } catch (err) {
    const message = `${fs.path}: unsupported or unreadable parquet file (${errorMessage(err)}); skipped`;
    if (!c.follow) {
      c.notice({ level: 'error', message, file: fs.path });
      fs.unsupported = true;
      return;
    }
    fs.parquetPending ??= { since: Date.now(), reported: false, message };
    fs.parquetPending.message = message;
  }
}
