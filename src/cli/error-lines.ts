// Errors as the command prints them: one plain line naming the file, never Node's raw errno text.
import { errorMessage } from '../util/errors';

const ERRNO: Record<string, string> = {
  ENOENT: 'no such file or folder',
  ENOTDIR: 'a part of the path is not a folder',
  EISDIR: 'is a folder, not a file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only file system',
};

/** An error as one plain line: Node's "ENOENT: no such file or directory, open 'x'" becomes "x: no such file or folder". */
export function plainError(e: unknown): string {
  const text = errorMessage(e);
  return text.replace(/\b(E[A-Z]+): [^,]*, \w+ '([^']*)'/g, (all, code: string, path: string) => (ERRNO[code] ? `${path}: ${ERRNO[code]}` : all)).replace(/\b(E[A-Z]+): [^,']*, \w+$/, (all, code: string) => ERRNO[code] ?? all)
    .replace(/^(.+?): \1: /, '$1: ');
}

