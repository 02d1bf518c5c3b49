// Reading one file's records in a single pass (the one-shot reader and the tail both use this).
import { open } from 'node:fs/promises';
import { dirname, relative } from 'node:path';
import { parseJsonLine } from './json.js';
import { readLineBatches } from './lines.js';
import { JsonlFileParser, sniff, UNSUPPORTED_HINT } from './parse.js';
import { readTrlFile } from './trl.js';
import type { LogFormat, NoticeSink, ParsedRecord } from './types.js';

/** The run name of a file in a folder run: its folder relative to the root ('' → undefined). */
export function runOfFile(root: string, file: string): string | undefined {
  const rel = relative(root, dirname(file));
  return rel && !rel.startsWith('..') ? rel.split('\\').join('/') : undefined;
}

export interface FileReadResult {
  format: LogFormat | undefined;
  /** Byte offset just after the last consumed record (a trailing incomplete line is not consumed). */
  consumed: number;
  /** Number of the next line to read. */
  nextLine: number;
  size: number;
}

/**
 * Reads the whole of `file` once, yielding batches of records. At the end a last line without a
 * newline is taken when it is a complete JSON object, else reported as incomplete.
 */
export async function* readFileOnce(
  root: string,
  file: string,
  onNotice: NoticeSink,
  result: Partial<FileReadResult> = {},
  runOnce: Set<string> = new Set(),
): AsyncGenerator<ParsedRecord[]> {
  let fh;
  try {
    fh = await open(file, 'r');
  } catch (err) {
    onNotice({ level: 'error', message: `${file}: cannot open (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); skipped`, file });
    return;
  }
  try {
    const size = (await fh.stat()).size;
    result.size = size;
    const head = Buffer.alloc(Math.min(64, size));
    if (head.length) await fh.read(head, 0, head.length, 0);
    const kind = sniff(head);
    if (kind === 'empty') {
      onNotice({ level: 'warning', message: `${file}: empty file, no records`, file });
      return;
    }
    if (kind === 'unsupported') {
      onNotice({ level: 'error', message: `${file}: unsupported file (${UNSUPPORTED_HINT}); skipped`, file });
      return;
    }
    if (kind === 'parquet') {
      try {
        const r = await readTrlFile(file, runOfFile(root, file));
        result.format = 'trl';
        result.consumed = size;
        if (r.rows === 0) onNotice({ level: 'warning', message: `${file}: TRL completions file with no rows`, file });
        yield r.records;
      } catch (err) {
        onNotice({ level: 'error', message: `${file}: unsupported or unreadable parquet file (${(err as Error).message}); skipped`, file });
      }
      return;
    }
    const parser = new JsonlFileParser(root, file, onNotice, undefined, runOnce);
    result.consumed = 0;
    result.nextLine = 1;
    for await (const lines of readLineBatches(fh, 0, 1, size)) {
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
    parser.finish();
    result.format = parser.format;
  } finally {
    await fh.close();
  }
}
