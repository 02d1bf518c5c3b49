// `consensus-lens equal A B` and `consensus-lens equal --jsonl FILE|-` (docs/contract.md#command-line, docs/contract.md#answer-equivalence).
// JSONL mode writes exactly one output line per non-blank input line, in order, so outputs stay
// aligned with inputs; a malformed line gets `{"equal":false,"error":"..."}` plus a one-line
// stderr message naming the file and line, and the exit code is 1 at the end (docs/answers.md).
import { createReadStream } from 'node:fs';
import { errorMessage } from '../util/errors';
import { createInterface } from 'node:readline';
import { answersEqual, explainEquality } from '../engine';
import { plainError } from './error-lines';

export interface AnswerCliIO {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const USAGE = 'usage: consensus-lens equal A B [--explain] | equal --jsonl FILE|- [--explain]';

/** Lines of a file or of stdin (`-`), with 1-based numbers; a missing file rejects. */
export async function* readLines(
  source: string,
  stdin: NodeJS.ReadableStream,
): AsyncGenerator<{ line: string; no: number }> {
  const input = source === '-' ? stdin : createReadStream(source, { encoding: 'utf8' });
  const rl = createInterface({ input, crlfDelay: Infinity });
  let no = 0;
  for await (const line of rl) yield { line, no: ++no };
}

/** A JSON field that must be an answer: a string, a number (written as text), or null. */
function answerField(rec: Record<string, unknown>, key: string): string | null {
  const v = rec[key];
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (v === null) return null;
  throw new Error(v === undefined ? `missing field "${key}"` : `field "${key}" must be a string or null`);
}

function write(out: NodeJS.WritableStream, obj: unknown): void {
  out.write(JSON.stringify(obj) + '\n');
}

function pairResult(a: string | null, b: string | null, explain: boolean): Record<string, unknown> {
  // A null answer (nothing extractable) is equal to nothing, not even another null (docs/contract.md#answer-extraction).
  if (a === null || b === null) {
    return explain ? { equal: false, reason: 'a null answer is never equal' } : { equal: false };
  }
  return explain ? { ...explainEquality(a, b) } : { equal: answersEqual(a, b) };
}

async function runJsonl(source: string, explain: boolean, io: AnswerCliIO): Promise<number> {
  const name = source === '-' ? '<stdin>' : source;
  let bad = 0;
  try {
    for await (const { line, no } of readLines(source, io.stdin)) {
      if (line.trim() === '') continue;
      let a: string | null;
      let b: string | null;
      try {
        const rec: unknown = JSON.parse(line);
        if (typeof rec !== 'object' || rec === null || Array.isArray(rec)) throw new Error('not a JSON object');
        a = answerField(rec as Record<string, unknown>, 'a');
        b = answerField(rec as Record<string, unknown>, 'b');
      } catch (e) {
        bad++;
        const msg = errorMessage(e);
        io.stderr.write(`consensus-lens equal: ${name}:${no}: ${msg}\n`);
        write(io.stdout, { equal: false, error: msg });
        continue;
      }
      write(io.stdout, pairResult(a, b, explain));
    }
  } catch (e) {
    io.stderr.write(`consensus-lens equal: ${name}: ${plainError(e).replace(/^.*?: /, (m) => (m === `${name}: ` ? '' : m))}\n`);
    return 1;
  }
  return bad > 0 ? 1 : 0;
}

export async function runEqual(args: string[], io: AnswerCliIO): Promise<number> {
  const explain = args.includes('--explain');
  const rest = args.filter((a) => a !== '--explain');
  const j = rest.indexOf('--jsonl');
  if (j >= 0) {
    const source = rest[j + 1];
    if (source === undefined || rest.length !== 2) {
      io.stderr.write(`consensus-lens equal: --jsonl needs exactly one FILE or -\n${USAGE}\n`);
      return 2;
    }
    return runJsonl(source, explain, io);
  }
  // `--` ends options, so answers that start with "-" can be passed: equal -- -7 −7
  const pos = rest[0] === '--' ? rest.slice(1) : rest;
  if (pos.length !== 2) {
    io.stderr.write(`consensus-lens equal: expected two answers\n${USAGE}\n`);
    return 2;
  }
  const [a, b] = pos as [string, string];
  io.stdout.write(explain ? JSON.stringify(explainEquality(a, b)) + '\n' : `${answersEqual(a, b)}\n`);
  return 0;
}
