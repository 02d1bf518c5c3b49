// `consensus-lens extract [FILE|-]` (docs/contract.md#command-line, docs/contract.md#answer-extraction): the whole input is ONE response; prints the
// extracted answer as a JSON string, or `null`. `extract --jsonl FILE|-` maps lines
// `{"response":..}` to `{"answer":..}` in order (malformed line: `{"answer":null,"error":..}`,
// a stderr message naming file and line, exit code 1 at the end). `--no-last-number` turns off
// the last-number fallback.
import { createReadStream } from 'node:fs';
import { errorMessage } from '../util/errors';
import { extractAnswer } from '../engine';
import { readLines, type AnswerCliIO } from './equal';
import { plainError } from './error-lines';

const USAGE = 'usage: consensus-lens extract [FILE|-] [--no-last-number] | extract --jsonl FILE|-';

async function readAll(source: string, stdin: NodeJS.ReadableStream): Promise<string> {
  const input = source === '-' ? stdin : createReadStream(source);
  const chunks: Buffer[] = [];
  for await (const c of input) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

async function runJsonl(source: string, lastNumber: boolean, io: AnswerCliIO): Promise<number> {
  const name = source === '-' ? '<stdin>' : source;
  let bad = 0;
  try {
    for await (const { line, no } of readLines(source, io.stdin)) {
      if (line.trim() === '') continue;
      let response: string;
      try {
        const rec: unknown = JSON.parse(line);
        const r = typeof rec === 'object' && rec !== null ? (rec as Record<string, unknown>).response : undefined;
        if (typeof r !== 'string') throw new Error('expected an object with a string field "response"');
        response = r;
      } catch (e) {
        bad++;
        const msg = errorMessage(e);
        io.stderr.write(`consensus-lens extract: ${name}:${no}: ${msg}\n`);
        io.stdout.write(JSON.stringify({ answer: null, error: msg }) + '\n');
        continue;
      }
      io.stdout.write(JSON.stringify({ answer: extractAnswer(response, { lastNumber }) }) + '\n');
    }
  } catch (e) {
    io.stderr.write(`consensus-lens extract: ${name}: ${plainError(e).replace(/^.*?: /, (m) => (m === `${name}: ` ? '' : m))}\n`);
    return 1;
  }
  return bad > 0 ? 1 : 0;
}

export async function runExtract(args: string[], io: AnswerCliIO): Promise<number> {
  const lastNumber = !args.includes('--no-last-number');
  const rest = args.filter((a) => a !== '--no-last-number');
  if (rest[0] === '--jsonl') {
    if (rest.length !== 2) {
      io.stderr.write(`consensus-lens extract: --jsonl needs exactly one FILE or -\n${USAGE}\n`);
      return 2;
    }
    return runJsonl(rest[1]!, lastNumber, io);
  }
  if (rest.length > 1 || (rest[0]?.startsWith('--') ?? false)) {
    io.stderr.write(`consensus-lens extract: unexpected arguments\n${USAGE}\n`);
    return 2;
  }
  const source = rest[0] ?? '-';
  let text: string;
  try {
    text = await readAll(source, io.stdin);
  } catch (e) {
    io.stderr.write(`consensus-lens extract: ${source}: ${plainError(e).replace(/^.*?: /, (m) => (m === `${source}: ` ? '' : m))}\n`);
    return 1;
  }
  io.stdout.write(JSON.stringify(extractAnswer(text, { lastNumber })) + '\n');
  return 0;
}
