// A log file's identity for the persisted cache: device, inode, size, modification and change
// times, and a hash of its first and of its last 64 KiB. A file appended to, truncated, replaced
// (another inode) or rewritten (another mtime/ctime, other head or last bytes) has another identity.
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

export interface FileIdentity {
  path: string;
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  /** SHA-1 of the first and of the last IDENTITY_BYTES bytes. */
  head: string;
  tail: string;
}

const IDENTITY_BYTES = 64 * 1024;

/**
 * The identity of `path` now (throws when it cannot be read). `upTo`: hash the file as if it ended
 * there (a file appended to since has the head and tail hashes of its identity then).
 */
export function fileIdentity(path: string, upTo?: number): FileIdentity {
  const fd = openSync(path, 'r');
  try {
    const st = fstatSync(fd);
    if (upTo !== undefined && upTo <= st.size) st.size = upTo;
    const hash = (pos: number, n: number) => {
      const b = Buffer.alloc(n);
      const got = n > 0 ? readSync(fd, b, 0, n, pos) : 0;
      return createHash('sha1').update(b.subarray(0, got)).digest('hex');
    };
    const n = Math.min(IDENTITY_BYTES, st.size);
    return { path, dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, head: hash(0, n), tail: hash(st.size - n, n) };
  } finally {
    closeSync(fd);
  }
}

export function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return a.path === b.path && a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.head === b.head && a.tail === b.tail;
}

/**
 * Is the file at `was.path` now `was` with bytes added at its end? Its first and its last
 * IDENTITY_BYTES of then hash as they did (the bytes between are taken on trust, as for
 * `sameIdentity`).
 */
export function grewFrom(was: FileIdentity): boolean {
  let fd: number;
  try {
    fd = openSync(was.path, 'r');
  } catch {
    return false;
  }
  try {
    if (fstatSync(fd).size < was.size) return false;
    const hash = (pos: number, n: number) => {
      const b = Buffer.alloc(n);
      const got = n > 0 ? readSync(fd, b, 0, n, pos) : 0;
      return createHash('sha1').update(b.subarray(0, got)).digest('hex');
    };
    const n = Math.min(IDENTITY_BYTES, was.size);
    return hash(0, n) === was.head && hash(was.size - n, n) === was.tail;
  } finally {
    closeSync(fd);
  }
}
