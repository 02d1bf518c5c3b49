// `consensus-lens serve --stdio` (docs/contract.md#command-line): the reward worker a training loop talks to.
//
// Protocol: one request per input line,
//   {"operator":"core","params":{"kappa":0.1,...},"groups":[<native group records, docs/contract.md#native-format>]}
// and one answer line per request, in request order:
//   {"results":[{"step":..,"question_id":..,"label":..,"rewards":[..],"gate":..,"advantages":[..],
//                "loss_weight":..,("confidence":"used"|"missing" for core)}, ...]}
// A request may carry an "id" (a string of up to 200 characters or a finite number): its answer
// echoes it (`{"id":..,"results":[..]}` / `{"id":..,"error":".."}`), so a client can check that an
// answer belongs to the request it is reading it for.
// A request that cannot be scored gets {"error":"..."} and the worker keeps serving. Blank lines
// are not requests and get no answer. Standard output carries answers only; nothing else is
// ever written there.
//
// - `ground_truth` (group- or roll-out-level) is removed before a group is built: no operator
//   ever sees it.
// - Roll-outs keep the order of the record's `rollouts` array (as `score` reads a group record),
//   so the same group scored here and by `score` gives the same numbers.
// - `params` take the engine's ids (`kappa`, `tauLow`, `ciscTemp`), the CLI flag names
//   (`tau-low`, `cisc-temp`) or snake_case (`tau_low`, `cisc_temp`, `adv_eps`, `adv_scale`).
//   Parameter flags given on the command line (`serve --stdio --kappa 0.2`) are the defaults
//   that a request's params override.
// - MS-TTRL's outcome cache (docs/contract.md#ms-ttrl) spans the requests a worker process serves: one run
//   context per process (per worker thread with --jobs, where groups are sharded by question so
//   each question's groups are still seen in order). Send steps in order; a restarted worker
//   starts with an empty cache.
// - `--jobs N`: score a request's groups on N worker threads (default: as `score`, up to 4;
//   0: in-process); the answer is the same either way. `--timing` writes one line of timings per request to stderr.
// - Every request is answered within `--request-timeout` seconds (default 300) on worker threads:
//   a thread that dies fails the groups it held (an error answer naming them) and is restarted; a
//   request that runs out of time gets an error and its threads are ended and restarted. MS-TTRL
//   requests on a restarted thread are refused (its outcome cache is gone). In-process (`--jobs
//   0`) the bound is the answer budgets' (docs/answers.md): scoring cannot be interrupted there.
// - Threads are restarted at most 8 times in any 64 groups sent (src/util/worker-pool.ts). A thread that cannot
//   be restarted ends the process with status 75 (EXIT_WORKERS_EXHAUSTED) and a line on stderr,
//   before the requests it held are answered: a client treats that as a dead worker, starts a
//   fresh one and sends them again (python/consensus_lens/reward.py). A process that stayed up
//   refusing every request would fail every later training step instead.
// - A request line longer than MAX_REQUEST_BYTES (256 MiB) is not held: it is read past and
//   answered with an error (no id: it was not parsed), and the worker keeps serving.

import { errorMessage } from '../util/errors';
import {
  OPERATOR_IDS,
  checkGroupSize,
  createRunContext,
  operatorSpec,
  paramSpec,
  prepareGroup,
  needsReasoning,
  resolveParams,
  resultToJson,
  scoreGroup,
  type Group,
  type OperatorId,
  type Params,
  type RunContext,
} from '../engine';
import { MAX_LINE_BYTES } from '../logs/lines';
import { convertNative } from '../logs/native';
import { type CliIO, UsageError, flagString, paramsFromFlags, parseCommand, parseInteger } from './args';
import { MAX_RESTARTS, RESTART_WINDOW, ShardedPool, WorkerDiedError, defaultJobs } from '../util/worker-pool';
import { maxGroupSizeFrom } from './run-options';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export class RequestError extends Error {
  /** The request's id, when it had a valid one (echoed in the error answer). */
  id?: RequestId;
}

export type RequestId = string | number;

/** A request's `id` when it is one we echo: a string of at most 200 characters or a finite number. */
function requestId(value: Obj): RequestId | undefined {
  const id = value.id;
  if (id === undefined || id === null) return undefined;
  if ((typeof id === 'string' && id.length <= 200) || (typeof id === 'number' && Number.isFinite(id))) return id;
  throw new RequestError('"id" must be a string of at most 200 characters or a finite number');
}

/** Maps a request's parameter names (engine id, CLI flag, or snake_case) to engine ids and validates them. */
export function paramsFromRequest(raw: unknown, defaults: Partial<Params> = {}): Partial<Params> {
  if (raw === undefined || raw === null) return { ...defaults };
  if (!isObj(raw)) throw new RequestError('"params" must be an object');
  const out: Record<string, unknown> = { ...defaults };
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'advScale' || key === 'adv_scale' || key === 'adv-scale') {
      out.advScale = value;
      continue;
    }
    const spec = paramSpec(key) ?? paramSpec(key.replace(/_/g, '-'));
    if (!spec) throw new RequestError(`unknown parameter "${key}"`);
    out[spec.id] = value;
  }
  try {
    resolveParams(out as Partial<Params>);
  } catch (e) {
    throw new RequestError(errorMessage(e));
  }
  return out as Partial<Params>;
}

/** A native group record from a request → an engine Group, without any ground truth. */
export function groupFromRequest(value: unknown, index: number): Group {
  const where = `groups[${index}]`;
  if (!isObj(value)) throw new RequestError(`${where} must be a group record (an object with "rollouts")`);
  if (value.kind === 'rollout' || !Array.isArray(value.rollouts)) {
    throw new RequestError(`${where} must be a group record with a "rollouts" array (roll-out records are not accepted here)`);
  }
  // Ground truth never reaches an operator: drop it before anything reads the record.
  const { ground_truth: _gt, ...rest } = value;
  const rollouts = (value.rollouts as unknown[]).map((r) => {
    if (!isObj(r)) return r;
    const { ground_truth: _rgt, ...ro } = r;
    return ro;
  });
  const conv = convertNative({ ...rest, kind: 'group', rollouts }, { file: '<request>', line: index + 1, offset: 0, length: 0 });
  if (!conv.ok) throw new RequestError(`${where}: ${conv.error}`);
  const rec = conv.record;
  if (rec.kind !== 'group') throw new RequestError(`${where} is not a group record`);
  if (rec.rollouts.length === 0) throw new RequestError(`${where} (question ${rec.questionId}, step ${rec.step}) has no roll-outs`);
  const g: Group = { step: rec.step, questionId: rec.questionId, rollouts: rec.rollouts.map(({ source: _s, ...r }) => r) };
  if (rec.run !== undefined) g.run = rec.run;
  if (rec.prompt !== undefined) g.prompt = rec.prompt;
  if (rec.outcomeChecks !== undefined) g.outcomeChecks = rec.outcomeChecks;
  if (rec.framework !== undefined) g.framework = rec.framework; // its advantages follow that trainer's formula
  return g;
}

export interface ParsedRequest {
  id?: RequestId;
  operator: OperatorId;
  params: Partial<Params>;
  groups: Group[];
}

export function parseRequest(line: string, defaults: { operator?: OperatorId; params?: Partial<Params>; maxGroupSize?: number } = {}): ParsedRequest {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    throw new RequestError(`the request is not JSON (${errorMessage(e)})`);
  }
  if (!isObj(value)) throw new RequestError('the request must be a JSON object {"operator", "params", "groups"}');
  const id = requestId(value);
  try {
    return { ...(id !== undefined ? { id } : {}), ...parseBody(value, defaults) };
  } catch (e) {
    if (e instanceof RequestError && id !== undefined) e.id = id;
    throw e;
  }
}

function parseBody(value: Obj, defaults: { operator?: OperatorId; params?: Partial<Params>; maxGroupSize?: number }): Omit<ParsedRequest, 'id'> {
  const op = value.operator ?? defaults.operator;
  if (typeof op !== 'string') throw new RequestError(`"operator" must be one of ${OPERATOR_IDS.join(', ')}`);
  if (!operatorSpec(op)) throw new RequestError(`unknown operator "${op}" (known: ${OPERATOR_IDS.join(', ')})`);
  const params = paramsFromRequest(value.params, defaults.params);
  if (!Array.isArray(value.groups)) throw new RequestError('"groups" must be an array of native group records');
  const groups = value.groups.map((g, i) => groupFromRequest(g, i));
  groups.forEach((g, i) => {
    try {
      checkGroupSize(g, defaults.maxGroupSize);
    } catch (e) {
      throw new RequestError(`groups[${i}]: ${errorMessage(e)}`);
    }
  });
  return { operator: op as OperatorId, params, groups };
}

function describe(g: Group, i: number): string {
  return `groups[${i}] (question ${g.questionId}, step ${g.step})`;
}

/** One group's answer object from a full score (the `results` entry of docs/contract.md#command-line). */
function answerFor(g: Group, i: number, op: OperatorId, result: Obj | undefined, why: string | undefined): Obj {
  if (!result) throw new RequestError(`${describe(g, i)}: ${op} cannot run on this group: ${why ?? 'unavailable'}`);
  const out: Obj = { step: g.step, question_id: g.questionId, label: result.label, rewards: result.rewards, gate: result.gate, advantages: result.advantages };
  if (result.loss_weight !== undefined) out.loss_weight = result.loss_weight;
  if (result.confidence !== undefined) out.confidence = result.confidence;
  for (const k of ['rewards', 'advantages'] as const) {
    if ((out[k] as unknown[]).some((x) => x === null)) throw new RequestError(`${describe(g, i)}: ${op} produced a non-finite ${k.slice(0, -1)}`);
  }
  if (out.gate === null) throw new RequestError(`${describe(g, i)}: ${op} produced a non-finite gate`);
  return out;
}

/** Scores requests, in-process or on worker threads. */
export interface Scorer {
  score(req: ParsedRequest): Promise<Obj[]>;
  close(): Promise<void>;
}

export function inProcessScorer(ctx: RunContext = createRunContext()): Scorer {
  return {
    async score(req) {
      return req.groups.map((g, i) => {
        const s = scoreGroup(prepareGroup(g, { reasoning: needsReasoning([req.operator]) }), { operators: [req.operator], params: req.params }, ctx);
        const r = s.results[req.operator];
        return answerFor(g, i, req.operator, r ? resultToJson(r) : undefined, s.unavailable[req.operator]);
      });
    },
    async close() {},
  };
}

export function poolScorer(jobs: number, timeoutMs = DEFAULT_REQUEST_TIMEOUT_S * 1000, onExhausted?: (why: string) => void): Scorer {
  const pool = new ShardedPool(jobs);
  if (onExhausted) pool.onExhausted = (i, why) => onExhausted(`worker thread ${i + 1} ${why}, and threads died more than ${MAX_RESTARTS} times in the last ${RESTART_WINDOW} groups sent`);
  // Threads that died (or were ended for running out of time) took their MS-TTRL outcome caches
  // with them: an MS-TTRL request on a restarted thread would score from an empty cache.
  const restarted = new Set<number>();
  pool.onDeath = (i) => restarted.add(i);
  return {
    async score(req) {
      const job = { operators: [req.operator], params: req.params };
      const threads = new Set(req.groups.map((g) => pool.workerFor(g.questionId)));
      if (req.operator === 'msttrl' && [...threads].some((i) => restarted.has(i))) {
        throw new RequestError('msttrl: a worker thread holding the outcome cache of these questions died; restart the reward worker (a fresh process starts with an empty cache)');
      }
      const parts = req.groups.map((g) => pool.submit<string>(g.questionId, { kind: 'score', group: g, job }));
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          for (const i of threads) pool.kill(i, `was ended: a request ran out of the ${timeoutMs / 1000} s bound`);
          reject(new RequestError(`not scored within ${timeoutMs / 1000} s (--request-timeout); its worker threads were restarted`));
        }, timeoutMs);
      });
      let lines: string[];
      try {
        lines = await Promise.race([Promise.all(parts), bound]);
      } catch (e) {
        if (e instanceof WorkerDiedError) throw new RequestError(`not scored: ${e.message}`);
        throw e;
      } finally {
        clearTimeout(timer);
      }
      return lines.map((line, i) => {
        const s = JSON.parse(line) as { results: Obj; unavailable?: Obj };
        return answerFor(req.groups[i], i, req.operator, s.results[req.operator] as Obj | undefined, s.unavailable?.[req.operator] as string | undefined);
      });
    },
    close: () => pool.close(),
  };
}

/** `--request-timeout` default: every request is answered, with results or an error, within it. */
export const DEFAULT_REQUEST_TIMEOUT_S = 300;

/** Requests parsed and being scored before the oldest answer is written (bounds memory). */
const MAX_IN_FLIGHT = 4;

/** Longest request line read (a longer one is skipped and answered with an error). */
export const MAX_REQUEST_BYTES = MAX_LINE_BYTES;

/** Exit status when a worker thread cannot be restarted (EX_TEMPFAIL: start a fresh worker). */
export const EXIT_WORKERS_EXHAUSTED = 75;

/**
 * The lines of `input` (a final line without a newline included; a trailing CR dropped), none
 * held past `max` bytes: a longer line is read past and yields `{ over: bytes }` instead.
 */
export async function* boundedLines(input: NodeJS.ReadableStream, max: number): AsyncGenerator<string | { over: number }> {
  let parts: Buffer[] = [];
  let size = 0;
  let over = false;
  const line = (): string | { over: number } => {
    if (over) return { over: size };
    const s = Buffer.concat(parts).toString('utf8');
    return s.endsWith('\r') ? s.slice(0, -1) : s;
  };
  for await (const raw of input) {
    const chunk = typeof raw === 'string' ? Buffer.from(raw) : (raw as Buffer);
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const end = nl < 0 ? chunk.length : nl;
      if (!over && size + (end - start) > max) {
        over = true;
        parts = [];
      }
      if (!over && end > start) parts.push(chunk.subarray(start, end));
      size += end - start;
      if (nl < 0) break;
      yield line();
      parts = [];
      size = 0;
      over = false;
      start = nl + 1;
    }
  }
  if (size > 0) yield line();
}

const USAGE = 'usage: consensus-lens serve --stdio [--operator OP] [--jobs N] [--max-group-size N] [--request-timeout S] [--timing] [--kappa K ...]';

export async function runServe(args: string[], io: CliIO): Promise<number> {
  const a = parseCommand('serve', args);
  const timing = a.flags.get('timing') === true;
  if (a.flags.get('stdio') !== true) throw new UsageError(`serve needs --stdio (the only transport). ${USAGE}`);
  if (a.positionals.length) throw new UsageError(`serve takes no PATH. ${USAGE}`);
  const op = flagString(a, 'operator');
  if (op !== undefined && !operatorSpec(op)) throw new UsageError(`--operator: unknown operator "${op}" (known: ${OPERATOR_IDS.join(', ')})`);
  const defaults = { operator: op as OperatorId | undefined, params: paramsFromFlags(a), maxGroupSize: maxGroupSizeFrom(flagString(a, 'max-group-size')) };
  const jobsFlag = flagString(a, 'jobs');
  const jobs = parseInteger(jobsFlag, 'jobs', 0, 64) ?? defaultJobs();
  const tf = flagString(a, 'request-timeout');
  const timeoutS = tf === undefined ? DEFAULT_REQUEST_TIMEOUT_S : Number(tf);
  if (!(timeoutS > 0 && timeoutS <= 86_400)) throw new UsageError('--request-timeout must be a number of seconds in (0, 86400]');
  const exhausted = (why: string): never => {
    io.stderr.write(`consensus-lens serve: ${why}; exiting (status ${EXIT_WORKERS_EXHAUSTED}) so that the client starts a fresh worker\n`);
    process.exit(EXIT_WORKERS_EXHAUSTED);
  };
  const scorer = jobs > 0 ? poolScorer(jobs, timeoutS * 1000, exhausted) : inProcessScorer();

  const write = (obj: unknown): Promise<void> =>
    new Promise((resolve) => {
      if (io.stdout.write(JSON.stringify(obj) + '\n')) resolve();
      else io.stdout.once('drain', () => resolve());
    });

  const errorAnswer = (n: number, e: unknown, id: RequestId | undefined) => {
    const msg = e instanceof RequestError ? e.message : `internal error: ${errorMessage(e)}`;
    id ??= e instanceof RequestError ? e.id : undefined;
    return { ...(id !== undefined ? { id } : {}), error: `request ${n}: ${msg}` };
  };
  // Requests are pipelined: a request is parsed and its groups handed to the scorer as soon as
  // its line arrives, while earlier ones are still being scored (worker threads) or written;
  // answers are written strictly in request order. Submission order is request order, so each
  // question's groups still reach its shard in step order (MS-TTRL).
  let lineNo = 0;
  let tail: Promise<void> = Promise.resolve();
  const inFlight: Promise<void>[] = [];
  try {
    for await (const item of boundedLines(io.stdin, MAX_REQUEST_BYTES)) {
      lineNo++;
      const line = typeof item === 'string' ? item : '';
      if (typeof item === 'string' && line.trim() === '') continue;
      const n = lineNo;
      const t0 = performance.now();
      let t1 = t0;
      let groups = 0;
      let job: Promise<unknown>;
      try {
        if (typeof item !== 'string') {
          throw new RequestError(`a request line of ${item.over.toLocaleString('en-US')} bytes, over the ${MAX_REQUEST_BYTES >> 20} MiB request-size limit (not read)`);
        }
        const req = parseRequest(line, defaults);
        groups = req.groups.length;
        t1 = performance.now();
        job = scorer.score(req).then(
          (results) => ({ ...(req.id !== undefined ? { id: req.id } : {}), results }),
          (e) => errorAnswer(n, e, req.id),
        );
      } catch (e) {
        job = Promise.resolve(errorAnswer(n, e, undefined));
      }
      const bytes = typeof item === 'string' ? line.length : item.over;
      const prev = tail;
      tail = (async () => {
        const answer = await job;
        const t2 = performance.now();
        await prev;
        await write(answer);
        if (timing) {
          const ms = (x: number) => Math.round(x * 10) / 10;
          io.stderr.write(JSON.stringify({ request: n, bytes, groups, parse_ms: ms(t1 - t0), score_ms: ms(t2 - t1), write_ms: ms(performance.now() - t2) }) + '\n');
        }
      })();
      inFlight.push(tail);
      if (inFlight.length >= MAX_IN_FLIGHT) await inFlight.shift();
    }
    await tail;
  } finally {
    await scorer.close();
  }
  return 0;
}
