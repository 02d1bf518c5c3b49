// Dumps the extension cannot read itself, converted through the Python package's converter
// (python/consensus_lens/convert.py; docs/log-formats.md#slime-and-miles, #trackio):
//
// - a Trackio project database (`{project}.db`): Node 20, which the extension host runs, has no
//   SQLite, and a SQLite image read in JavaScript does not see the WAL that holds Trackio's newest
//   rows; Python's sqlite3 opens it read-only with the WAL.
// - a slime / miles `rollout_data/{id}.pt`: a pickle, which runs code when it is loaded. It is
//   converted only when the user opted in (`consensusLens.convert.allowPickles`, a user/machine
//   setting) in a trusted workspace, and then with `torch.load(weights_only=True)`. From an
//   untrusted workspace no pickle is ever handed to Python: `refusal` is checked before any process
//   starts, on every conversion (the first and each new file of a followed dump).
// - a miles dump's `trajectory/*.jsonl` with its `dashboard_columns/*.parquet`: converted here, in
//   process (src/logs/miles-columns.ts), so that its samples carry their confidence; no pickle.
//
// The interpreter comes from the user/machine setting `consensusLens.convert.python`, never from a
// workspace. The converter runs as `python -c SOURCE` (the source is the extension's own copy,
// so the package need not be installed) in a folder of the extension's storage, with
// PYTHONSAFEPATH set, so nothing in the workspace is on its import path. Pure: no 'vscode'.
import { spawn as nodeSpawn, type SpawnOptions } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { errorMessage } from '../../util/errors';
import { milesColumnsFile, milesNativeRecords, readMilesColumns } from '../../logs/miles-columns';

export type DumpKind = 'trackio' | 'slime' | 'miles';

/** What a path given to the converter is, and the files it converts. */
export interface Dump {
  kind: DumpKind;
  /** The path as given (a file, or a slime dump folder). */
  source: string;
  /** A label for the converted run folder. */
  label: string;
}

const PT = /\.pt$/i;

/** The `.pt` dumps of a slime / miles dump folder (`DIR`, or `DIR/rollout_data`), in name order. */
export function slimeFiles(folder: string): string[] {
  const dir = basename(folder) === 'rollout_data' ? folder : join(folder, 'rollout_data');
  try {
    return readdirSync(dir)
      .filter((n) => PT.test(n))
      .sort()
      .map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/** The trajectory files of a miles dump folder (`DIR`, or `DIR/trajectory`), in name order. */
export function milesFiles(folder: string): string[] {
  const dir = basename(folder) === 'trajectory' ? folder : join(folder, 'trajectory');
  try {
    return readdirSync(dir)
      .filter((n) => /^(eval_)?\d+\.jsonl$/i.test(n))
      .sort()
      .map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/**
 * The dump a path names, or undefined: a `.db` file (Trackio); a folder holding miles'
 * `trajectory/*.jsonl` (read with its `dashboard_columns/*.parquet`, no pickle); a `.pt` file or a
 * folder holding `rollout_data/*.pt` (slime / miles).
 */
export function dumpOf(path: string): Dump | undefined {
  const p = resolve(path);
  let dir = false;
  try {
    dir = statSync(p).isDirectory();
  } catch {
    return undefined;
  }
  if (!dir && /\.db$/i.test(p)) return { kind: 'trackio', source: p, label: basename(p).replace(/\.db$/i, '') };
  if (!dir && PT.test(p)) {
    const parent = dirname(p);
    return { kind: 'slime', source: p, label: basename(basename(parent) === 'rollout_data' ? dirname(parent) : parent) };
  }
  if (dir && milesFiles(p).length > 0) return { kind: 'miles', source: p, label: basename(basename(p) === 'trajectory' ? dirname(p) : p) };
  if (dir && slimeFiles(p).length > 0) return { kind: 'slime', source: p, label: basename(basename(p) === 'rollout_data' ? dirname(p) : p) };
  return undefined;
}

/** The files a conversion reads: the database, the `.pt` file, or the dump folder's `.pt` files. */
export function dumpInputs(d: Dump): string[] {
  if (d.kind === 'trackio') return [d.source];
  if (d.kind === 'miles') return milesFiles(d.source);
  return PT.test(d.source) ? [d.source] : slimeFiles(d.source);
}

/** The folder a dump converts into, under the extension's storage: one per source path. */
export function convertedFolder(storage: string, d: Dump): string {
  const h = createHash('sha1').update(`${d.kind}\0${d.source}`).digest('hex').slice(0, 12);
  return join(storage, 'converted', h, d.label.replace(/[^\w.-]+/g, '_') || d.kind);
}

export interface ConvertGate {
  /** `vscode.workspace.isTrusted`. */
  trusted: boolean;
  /** `consensusLens.convert.allowPickles` from user/machine settings. */
  allowPickles: boolean;
}

export const PICKLE_WARNING =
  'A .pt file is a pickle: loading it can run any code the file names. Consensus Lens converts one only when you opt in (consensusLens.convert.allowPickles, user settings) in a trusted workspace, and then with torch.load(weights_only=True), which builds tensors and plain data only and refuses anything else.';

/** Why a dump is not converted, or null. Checked before any process starts. */
export function refusal(kind: DumpKind, gate: ConvertGate): string | null {
  if (kind !== 'slime') return null;
  if (!gate.trusted) return `not converted: this workspace is not trusted (Restricted Mode), and a .pt file from it is never loaded. ${PICKLE_WARNING}`;
  if (!gate.allowPickles) return `not converted: converting .pt files is off (consensusLens.convert.allowPickles). ${PICKLE_WARNING}`;
  return null;
}

export interface ConvertJob {
  /** The interpreter (user/machine setting). */
  python: string;
  /** The converter's Python source (python/consensus_lens/convert.py). */
  source: string;
  kind: DumpKind;
  inputs: string[];
  out: string;
  /** A folder outside the workspace to run in (the extension's storage). */
  cwd: string;
  gate: ConvertGate;
  rewardKey?: string;
  timeoutMs?: number;
}

export type ConvertResult = { ok: true; written: string[]; note: string } | { ok: false; refused: boolean; error: string };

type Spawn = (cmd: string, args: string[], opts: SpawnOptions) => import('node:child_process').ChildProcess;

/** The interpreter's arguments for a job (the converter's command line after `-c SOURCE`). */
export function converterArgs(job: Pick<ConvertJob, 'source' | 'kind' | 'inputs' | 'out' | 'rewardKey'>): string[] {
  return ['-c', job.source, job.kind, ...job.inputs, '--out', job.out, ...(job.rewardKey ? ['--reward-key', job.rewardKey] : [])];
}

const MAX_OUTPUT = 1 << 20;

/** Runs the converter on a job, after `refusal`; never throws. */
export function convertDump(job: ConvertJob, spawn: Spawn = nodeSpawn): Promise<ConvertResult> {
  const why = refusal(job.kind, job.gate);
  if (why !== null) return Promise.resolve({ ok: false, refused: true, error: why });
  if (job.inputs.length === 0) return Promise.resolve({ ok: true, written: [], note: '' });
  if (job.kind === 'miles') return convertMiles(job.inputs, job.out);
  return new Promise((done) => {
    let out = '';
    let err = '';
    let settled = false;
    const finish = (r: ConvertResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done(r);
    };
    let child: ReturnType<Spawn>;
    try {
      child = spawn(job.python, converterArgs(job), {
        cwd: job.cwd,
        env: { ...process.env, PYTHONSAFEPATH: '1', PYTHONDONTWRITEBYTECODE: '1', PYTHONIOENCODING: 'utf-8' },
        stdio: ['ignore', 'pipe', 'pipe'],
        shell: false,
        windowsHide: true,
      });
    } catch (e) {
      return finish({ ok: false, refused: false, error: `could not start ${job.python}: ${errorMessage(e)}` });
    }
    const timer = setTimeout(() => {
      child.kill();
      finish({ ok: false, refused: false, error: `the converter ran over ${Math.round((job.timeoutMs ?? 600_000) / 1000)} s and was stopped` });
    }, job.timeoutMs ?? 600_000);
    child.stdout?.on('data', (b: Buffer) => {
      if (out.length < MAX_OUTPUT) out += b.toString('utf8');
    });
    child.stderr?.on('data', (b: Buffer) => {
      if (err.length < MAX_OUTPUT) err += b.toString('utf8');
    });
    child.on('error', (e) => finish({ ok: false, refused: false, error: `could not run ${job.python} (consensusLens.convert.python): ${e.message}` }));
    child.on('close', (code) => {
      const text = err.trim();
      if (code === 0) finish({ ok: true, written: out.split('\n').filter(Boolean), note: text });
      else finish({ ok: false, refused: false, error: text || `${job.python} exited with status ${code}` });
    });
  });
}

/** A file's size and modification time, as a change stamp ('' when missing). */
export function stamp(path: string): string {
  try {
    const s = statSync(path);
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return '';
  }
}

/** The stamps that say a dump changed: a Trackio database with its WAL; each `.pt` file of a slime dump. */
export function dumpStamps(d: Dump): Map<string, string> {
  const m = new Map<string, string>();
  if (d.kind === 'trackio') {
    // opening a WAL database, even read-only, creates an empty `-wal` beside it: no change
    const wal = stamp(`${d.source}-wal`);
    m.set(d.source, `${stamp(d.source)}|${wal.startsWith('0:') ? '' : wal}`);
  } else if (d.kind === 'miles') for (const f of dumpInputs(d)) m.set(f, `${stamp(f)}|${stamp(milesColumnsFile(f) ?? '')}`);
  else for (const f of dumpInputs(d)) m.set(f, stamp(f));
  return m;
}

/**
 * Follows a dump: converts it, then every `pollMs` converts again what changed (a Trackio
 * database or its WAL written: the whole database again, read-only; a slime dump: the `.pt`
 * files that are new or changed). Conversions never overlap. `job` builds each conversion with
 * the gate as it is at that moment, so turning the opt-in off stops the pickles.
 */
export class DumpFollower {
  private seen = new Map<string, string>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<void> | undefined;
  private disposed = false;

  constructor(
    readonly dump: Dump,
    private readonly job: (inputs: string[]) => ConvertJob,
    private readonly report: (r: ConvertResult, inputs: string[]) => void,
    private readonly spawn: Spawn = nodeSpawn,
  ) {}

  /** file → its stamp when its conversion last failed on a poll, not reported yet. */
  private failedAt = new Map<string, string>();

  /**
   * One pass: converts what changed since the last pass; resolves with its result (undefined:
   * nothing changed). `live` (the poll): a conversion that fails is tried again on the next poll
   * and reported only when it fails again on the same bytes — a `.pt` or a trajectory being
   * written fails until it is whole. Otherwise (opened by the user) a failure is reported at once.
   * A refusal is always reported once, and nothing is tried again until the file changes.
   */
  async pass(live = false): Promise<ConvertResult | undefined> {
    if (this.running) await this.running;
    if (this.disposed) return undefined;
    const now = dumpStamps(this.dump);
    const changed = [...now].filter(([f, s]) => s !== '' && this.seen.get(f) !== s).map(([f]) => f);
    if (changed.length === 0) return undefined;
    let result: ConvertResult | undefined;
    this.running = (async () => {
      // a file at a time: one that fails (still being written) holds up no other
      const results: ConvertResult[] = [];
      for (const f of changed) {
        const r = await convertDump(this.job([f]), this.spawn);
        results.push(r);
        const settled = !live || r.ok || r.refused || this.failedAt.get(f) === now.get(f);
        if (!settled) {
          this.failedAt.set(f, now.get(f)!);
          continue;
        }
        this.seen.set(f, now.get(f)!);
        this.failedAt.delete(f);
        this.report(r, [f]);
      }
      const bad = results.find((r) => !r.ok);
      result = bad ?? {
        ok: true,
        written: results.flatMap((r) => (r.ok ? r.written : [])),
        note: [...new Set(results.map((r) => (r.ok ? r.note : '')).filter(Boolean))].join('; '),
      };
    })();
    await this.running;
    this.running = undefined;
    return result;
  }

  start(pollMs: number): void {
    if (this.timer || this.disposed) return;
    this.timer = setInterval(() => void this.pass(true), pollMs);
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * miles trajectory files with their dashboard columns, as native group records (no Python, no
 * pickle: src/logs/miles-columns.ts): `OUT/{id:06d}.jsonl`, evaluations `OUT/eval/`, each written
 * whole and renamed into place.
 */
export async function convertMiles(inputs: string[], out: string): Promise<ConvertResult> {
  const written: string[] = [];
  const notes: string[] = [];
  try {
    for (const f of inputs) {
      const cols = milesColumnsFile(f);
      let columns: Awaited<ReturnType<typeof readMilesColumns>> | undefined;
      if (cols && existsSync(cols)) {
        try {
          columns = await readMilesColumns(cols);
        } catch (err) {
          notes.push(`${cols}: ${errorMessage(err)} (no confidence for ${basename(f)})`);
        }
      }
      const recs = await milesNativeRecords(f, columns);
      const m = /^(eval_)?(\d+)\.jsonl$/i.exec(basename(f))!;
      const folder = m[1] ? join(out, 'eval') : out;
      mkdirSync(folder, { recursive: true });
      const dest = join(folder, `${m[2].padStart(6, '0')}.jsonl`);
      writeFileSync(`${dest}.tmp`, recs.map((r) => `${JSON.stringify(r)}\n`).join(''));
      renameSync(`${dest}.tmp`, dest);
      written.push(dest);
    }
  } catch (err) {
    return { ok: false, refused: false, error: errorMessage(err) };
  }
  return { ok: true, written, note: notes.join('; ') };
}
