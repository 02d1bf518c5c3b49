// Shared helpers for the answers tests: the public vectors and in-memory CLI streams.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PassThrough } from 'node:stream';

export interface Vector {
  a: string;
  b: string;
  equal: boolean;
  category: string;
  b_is_response?: boolean;
}

/** Tests run from the repository root; the public vectors (docs/contract.md#answer-equivalence) are copied into the repository. */
export const VECTORS_PATH = resolve(process.cwd(), 'test/answers/vectors/answer-equivalence.jsonl');

export function loadVectors(): Vector[] {
  return readFileSync(VECTORS_PATH, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Vector);
}

export interface Captured {
  io: { stdin: PassThrough; stdout: PassThrough; stderr: PassThrough };
  out: () => string;
  err: () => string;
}

export function captureIO(stdinText = ''): Captured {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  stdin.end(stdinText);
  return { io: { stdin, stdout, stderr }, out: () => out, err: () => err };
}
