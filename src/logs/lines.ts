// Byte-exact line reading: splits a byte range of a file into lines with their offsets, in chunks,
// without holding the file in memory. A line longer than a chunk is assembled from parts.
import { open, type FileHandle } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';

export interface Line {
  text: string;
  /** Byte offset of the line's first byte and its length, without the newline (and without a '\r'). */
  offset: number;
  length: number;
  /** 1-based line number. */
  line: number;
  /** False for a last line that has no newline yet. */
  terminated: boolean;
  /** The bytes were not valid UTF-8 (decoded with U+FFFD replacement characters). */
  badUtf8: boolean;
  /** Byte offset just after the line and its newline. */
  end: number;
}

const CHUNK = 1 << 20;

/** What the reader needs of a FileHandle (a read-ahead buffer can stand in for it). */
export interface Readable {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
}

function decode(buf: Buffer, start: number, end: number): { text: string; length: number; badUtf8: boolean } {
  let e = end;
  if (e > start && buf[e - 1] === 13) e--;
  const text = buf.toString('utf8', start, e);
  const badUtf8 = text.includes('\uFFFD') && !isUtf8(buf.subarray(start, e));
  return { text, length: e - start, badUtf8 };
}

/**
 * Reads lines of `fh` from byte `start` (which must be a line start, numbered `firstLine`) up to
 * byte `end`, in batches. The final piece without a newline, if any, is yielded with
 * `terminated: false`.
 */
export async function* readLineBatches(
  fh: Readable,
  start: number,
  firstLine: number,
  end: number,
  chunkSize = CHUNK,
): AsyncGenerator<Line[]> {
  let pos = start;
  let lineNo = firstLine;
  let parts: Buffer[] = [];
  let partsStart = start;
  let partsLen = 0;
  const buf = Buffer.allocUnsafe(Math.min(chunkSize, Math.max(1, end - start)));
  while (pos < end) {
    const want = Math.min(buf.length, end - pos);
    const { bytesRead } = await fh.read(buf, 0, want, pos);
    if (bytesRead === 0) break; // the file shrank under us; the caller re-checks its size
    const batch: Line[] = [];
    let i = 0;
    while (i < bytesRead) {
      const nl = buf.indexOf(10, i);
      if (nl === -1 || nl >= bytesRead) break;
      if (partsLen > 0) {
        parts.push(Buffer.from(buf.subarray(i, nl)));
        const whole = Buffer.concat(parts);
        const d = decode(whole, 0, whole.length);
        batch.push({ text: d.text, offset: partsStart, length: d.length, line: lineNo++, terminated: true, badUtf8: d.badUtf8, end: pos + nl + 1 });
        parts = [];
        partsLen = 0;
      } else {
        const d = decode(buf, i, nl);
        batch.push({ text: d.text, offset: pos + i, length: d.length, line: lineNo++, terminated: true, badUtf8: d.badUtf8, end: pos + nl + 1 });
      }
      i = nl + 1;
    }
    if (i < bytesRead) {
      if (partsLen === 0) partsStart = pos + i;
      parts.push(Buffer.from(buf.subarray(i, bytesRead)));
      partsLen += bytesRead - i;
    }
    pos += bytesRead;
    if (batch.length) yield batch;
  }
  if (partsLen > 0) {
    const whole = Buffer.concat(parts);
    const d = decode(whole, 0, whole.length);
    yield [{ text: d.text, offset: partsStart, length: d.length, line: lineNo, terminated: false, badUtf8: d.badUtf8, end: partsStart + partsLen }];
  }
}

/** Reads `length` bytes at `offset` of `file`. */
export async function readRange(file: string, offset: number, length: number): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(length);
    let got = 0;
    while (got < length) {
      const { bytesRead } = await fh.read(buf, got, length - got, offset + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return got === length ? buf : buf.subarray(0, got);
  } finally {
    await fh.close();
  }
}
