// Byte-exact line reading: splits a byte range of a file into lines with their offsets, in chunks,
// without holding the file in memory. A line longer than a chunk is assembled from parts, up to
// MAX_LINE_BYTES (docs/log-formats.md, "Bounds"): a longer line is not held at all, only scanned
// for its end, and comes out as a line with `tooLong` set (its readers report it and skip it), so
// a sparse file whose second line is a 1 GiB hole costs one chunk of memory, not 2 GB.
import { open, } from 'node:fs/promises';
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
  /** The line was longer than MAX_LINE_BYTES: its bytes were not kept (`text` is a placeholder). */
  tooLong?: boolean;
}

/** The longest line read (bytes); a longer one is reported and skipped. */
export const MAX_LINE_BYTES = 256 << 20;

/** What a line over MAX_LINE_BYTES reads as, to a reader that does not look at `tooLong`. */
const TOO_LONG = Buffer.from('"line over the line-length limit"');

const CHUNK = 1 << 20;

/** What the reader needs of a FileHandle (a read-ahead buffer can stand in for it). */
export interface Readable {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
}

/**
 * A line as bytes (the run index scans them without decoding the roll-out texts: skeleton.ts).
 * `bytes` (without the newline and a '\r') may be a view into the reader's buffer: it is valid
 * until the next batch is asked for.
 */
export interface RawLine {
  bytes: Buffer;
  offset: number;
  length: number;
  line: number;
  terminated: boolean;
  end: number;
  tooLong?: boolean;
}

function trimCr(buf: Buffer, start: number, end: number): Buffer {
  return buf.subarray(start, end > start && buf[end - 1] === 13 ? end - 1 : end);
}

/** A raw line decoded (what readLineBatches yields). */
export function decodeLine(l: RawLine): Line {
  const text = l.bytes.toString('utf8');
  const badUtf8 = text.includes('\uFFFD') && !isUtf8(l.bytes);
  const out: Line = { text, offset: l.offset, length: l.length, line: l.line, terminated: l.terminated, badUtf8, end: l.end };
  if (l.tooLong) out.tooLong = true;
  return out;
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
  for await (const batch of readRawLineBatches(fh, start, firstLine, end, chunkSize)) yield batch.map(decodeLine);
}

/** readLineBatches without decoding: each line's bytes (see RawLine for how long they stay valid). */
export async function* readRawLineBatches(
  fh: Readable,
  start: number,
  firstLine: number,
  end: number,
  chunkSize = CHUNK,
  maxLine = MAX_LINE_BYTES,
): AsyncGenerator<RawLine[]> {
  let pos = start;
  let lineNo = firstLine;
  let parts: Buffer[] = [];
  let partsStart = start;
  let partsLen = 0;
  /** The line in parts passed maxLine: its bytes are dropped, only its length counted. */
  let skipping = false;
  const buf = Buffer.allocUnsafe(Math.min(chunkSize, Math.max(1, end - start)));
  while (pos < end) {
    const want = Math.min(buf.length, end - pos);
    const { bytesRead } = await fh.read(buf, 0, want, pos);
    if (bytesRead === 0) break; // the file shrank under us; the caller re-checks its size
    const batch: RawLine[] = [];
    let i = 0;
    while (i < bytesRead) {
      const nl = buf.indexOf(10, i);
      if (nl === -1 || nl >= bytesRead) break;
      if (skipping) {
        const length = partsLen + (nl - i);
        batch.push({ bytes: TOO_LONG, offset: partsStart, length, line: lineNo++, terminated: true, end: pos + nl + 1, tooLong: true });
        skipping = false;
        parts = [];
        partsLen = 0;
      } else if (nl - i > maxLine || partsLen + (nl - i) > maxLine) {
        const length = partsLen + (nl - i);
        batch.push({ bytes: TOO_LONG, offset: partsLen > 0 ? partsStart : pos + i, length, line: lineNo++, terminated: true, end: pos + nl + 1, tooLong: true });
        parts = [];
        partsLen = 0;
      } else if (partsLen > 0) {
        parts.push(Buffer.from(buf.subarray(i, nl)));
        const whole = Buffer.concat(parts);
        const bytes = trimCr(whole, 0, whole.length);
        batch.push({ bytes, offset: partsStart, length: bytes.length, line: lineNo++, terminated: true, end: pos + nl + 1 });
        parts = [];
        partsLen = 0;
      } else {
        const bytes = trimCr(buf, i, nl);
        batch.push({ bytes, offset: pos + i, length: bytes.length, line: lineNo++, terminated: true, end: pos + nl + 1 });
      }
      i = nl + 1;
    }
    if (i < bytesRead) {
      if (partsLen === 0) partsStart = pos + i;
      if (!skipping && partsLen + (bytesRead - i) > maxLine) {
        skipping = true;
        parts = [];
      }
      if (!skipping) parts.push(Buffer.from(buf.subarray(i, bytesRead)));
      partsLen += bytesRead - i;
    }
    pos += bytesRead;
    if (batch.length) yield batch;
  }
  if (skipping) {
    yield [{ bytes: TOO_LONG, offset: partsStart, length: partsLen, line: lineNo, terminated: false, end: partsStart + partsLen, tooLong: true }];
  } else if (partsLen > 0) {
    const whole = Buffer.concat(parts);
    const bytes = trimCr(whole, 0, whole.length);
    yield [{ bytes, offset: partsStart, length: bytes.length, line: lineNo, terminated: false, end: partsStart + partsLen }];
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
