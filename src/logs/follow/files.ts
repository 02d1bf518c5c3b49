// Per-file state of a followed run, and how a file changed since it was last read.
//
// Each file is read from the byte after its last consumed record (`consumed`). A file that
// shrinks, whose inode or device changes (replaced, e.g. renamed over), or whose first bytes or
// the bytes just before `consumed` change (rewritten in place) is re-read from scratch. A file of
// the same size with another modification or change time is re-read too: an append-only log does not change
// without growing, so that is a rewrite (a `touch` costs one re-read, a stale group never).
import type { Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import type { JsonlFileParser } from '../parse.js';
import type { LogFormat } from '../log-types.js';

export interface FileState {
  path: string;
  format?: LogFormat;
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  /** Change time: a content change with the modification time put back (utimes) still moves it. */
  ctimeMs: number;
  /** Byte offset after the last consumed record. */
  consumed: number;
  nextLine: number;
  head: Buffer;
  /** The bytes just before `consumed` (follow mode): a file rewritten to a larger size is caught by these. */
  tail?: Buffer;
  parser?: JsonlFileParser;
  unsupported: boolean;
  /** The file ends in an incomplete line (a writer mid-line): its groups do not complete by idleness. */
  partial?: boolean;
  /** Not a log (a file of the run folder skipped quietly). */
  notLog?: boolean;
  /** The last read error (reported once). */
  failed?: string;
  /** parquet: the last read failed (being written?) */
  parquetPending?: { since: number; reported: boolean; message: string };
}

/** Bytes kept of a file's head and of the bytes before `consumed`. */
export const HEAD = 64;

export function newFileState(path: string, st: Stats): FileState {
  return { path, dev: st.dev, ino: st.ino, size: 0, mtimeMs: 0, ctimeMs: 0, consumed: 0, nextLine: 1, head: Buffer.alloc(0), unsupported: false };
}

export type FileChange = 'unchanged' | 'grown' | 'replaced' | 'truncated' | 'rewritten';

/**
 * How `fs`'s file changed, judged from a fresh stat and (when it grew or was touched) its head and
 * tail bytes. `event`: a file-system event named the file, so even the same size and modification
 * time (timestamps are as coarse as the kernel's tick: two writes a few milliseconds apart can share
 * one) get their head and tail bytes compared.
 */
export async function fileChange(fs: FileState, st: Stats, event = false): Promise<FileChange> {
  if (st.ino !== fs.ino || st.dev !== fs.dev) return 'replaced';
  if (st.size < fs.size || st.size < fs.consumed) return 'truncated';
  if (st.size === fs.size && st.mtimeMs === fs.mtimeMs && st.ctimeMs === fs.ctimeMs && !fs.parquetPending) {
    if (!event || fs.unsupported) return 'unchanged';
    if (fs.head.length > 0 && !(await sameBytes(fs.path, 0, fs.head))) return 'rewritten';
    if (fs.tail && !(await sameBytes(fs.path, fs.consumed - fs.tail.length, fs.tail))) return 'rewritten';
    return 'unchanged';
  }
  if (fs.head.length > 0 && !(await sameBytes(fs.path, 0, fs.head))) return 'rewritten';
  if (fs.tail && !(await sameBytes(fs.path, fs.consumed - fs.tail.length, fs.tail))) return 'rewritten';
  // the same size, another modification or change time: rewritten in place (see the header)
  if (st.size === fs.size && fs.consumed > 0 && !fs.unsupported && fs.format !== 'trl' && fs.format !== 'wandb') return 'rewritten';
  return 'grown';
}

/** The HEAD bytes of `path` just before `end` (a file's `tail` as read up to there); undefined when they cannot be read. */
export async function bytesBefore(path: string, end: number): Promise<Buffer | undefined> {
  const n = Math.min(HEAD, end);
  if (n <= 0) return undefined;
  const fh = await open(path, 'r');
  try {
    const b = Buffer.alloc(n);
    const { bytesRead } = await fh.read(b, 0, n, end - n);
    return bytesRead === n ? b : undefined;
  } finally {
    await fh.close();
  }
}

export async function sameBytes(path: string, pos: number, bytes: Buffer): Promise<boolean> {
  try {
    const fh = await open(path, 'r');
    try {
      const b = Buffer.alloc(bytes.length);
      const { bytesRead } = await fh.read(b, 0, b.length, pos);
      return bytesRead === bytes.length && b.equals(bytes);
    } finally {
      await fh.close();
    }
  } catch {
    return false;
  }
}

/** The part of a FileHandle that the reader uses. */
export interface FileLike {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  stat(): Promise<Stats>;
  close(): Promise<void>;
}

/** A FileHandle look-alike over a file's content read ahead (with the stat it was read at). */
export function bufferHandle(content: Buffer, st: Stats): FileLike {
  return {
    async read(buffer, offset, length, position) {
      const n = Math.max(0, Math.min(length, content.length - position));
      content.copy(buffer, offset, position, position + n);
      return { bytesRead: n };
    },
    async stat() {
      return { ...st, size: content.length, ino: st.ino, dev: st.dev, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs } as Stats;
    },
    async close() {},
  };
}
