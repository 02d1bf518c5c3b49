// A training job's process, behind a Pseudoterminal that a VS Code task (CustomExecution) shows in
// its own terminal. Why this and not a ShellExecution:
//   - the exit code is the process's own (a ShellExecution's onDidEndTaskProcess reports the
//     shell's, and nothing at all when the task is a wrapper that keeps the terminal open);
//   - the output is captured as it streams (the last lines go into the exit notification and a
//     log file under the extension's storage) without wrapping the user's command in `tee`
//     (which loses the exit status in POSIX sh and cannot work behind an ssh wrapper);
//   - a configured terminal profile is honoured the same way: its path, args and env are the
//     process that runs the command (see invocation() in profile.ts).
// The cost: the job's stdout/stderr are pipes, not a TTY (PYTHONUNBUFFERED=1 is set so Python
// output is not held back; programs that insist on a TTY, e.g. password prompts, will not work —
// use keys/agents for ssh). Stop sends SIGTERM to the job's process group, SIGKILL 5 s later.
import * as vscode from 'vscode';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { OutputTail } from './gpus';
import type { Invocation } from './profile';

export interface JobProcessEvents {
  onStart(pid: number | undefined): void;
  /** code: the exit code; a signal ends as 128 + its number. */
  onExit(code: number, signal: NodeJS.Signals | null): void;
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15, SIGPIPE: 13, SIGABRT: 6 };

/** Environment of the extension host minus what belongs to VS Code itself. */
export function cleanEnv(base: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined) continue;
    if (k.startsWith('VSCODE_') || k === 'ELECTRON_RUN_AS_NODE' || k === 'ELECTRON_NO_ATTACH_CONSOLE') continue;
    out[k] = v;
  }
  return out;
}

export class JobPty implements vscode.Pseudoterminal {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  private readonly closeEmitter = new vscode.EventEmitter<number | void>();
  readonly onDidWrite = this.writeEmitter.event;
  readonly onDidClose = this.closeEmitter.event;
  readonly tail = new OutputTail();
  private child: ChildProcess | null = null;
  private file: WriteStream | null = null;
  private exited = false;
  stopRequested = false;

  constructor(
    private readonly inv: Invocation,
    private readonly opts: { cwd: string; env: Record<string, string>; command: string; outputFile: string; banner: string },
    private readonly events: JobProcessEvents,
  ) {}

  private write(text: string): void {
    this.writeEmitter.fire(text.replace(/\r?\n/g, '\r\n'));
  }

  private output(chunk: Buffer): void {
    const s = chunk.toString('utf8');
    this.tail.push(s);
    this.file?.write(chunk);
    this.write(s);
  }

  open(): void {
    try {
      mkdirSync(dirname(this.opts.outputFile), { recursive: true });
      this.file = createWriteStream(this.opts.outputFile, { flags: 'a' });
      this.file.on('error', () => (this.file = null));
    } catch {
      this.file = null;
    }
    this.write(`\x1b[2m${this.opts.banner}\x1b[0m\n\x1b[1m$ ${this.opts.command}\x1b[0m\n`);
    const env: Record<string, string> = { ...cleanEnv(process.env) };
    for (const [k, v] of Object.entries(this.inv.env)) {
      if (v === null) delete env[k];
      else env[k] = v;
    }
    Object.assign(env, this.opts.env);
    let child: ChildProcess;
    try {
      child = spawn(this.inv.file, this.inv.args, { cwd: this.opts.cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
    } catch (e) {
      this.finish(127, null, `could not start ${this.inv.file}: ${(e as Error).message}`);
      return;
    }
    this.child = child;
    child.stdout?.on('data', (d: Buffer) => this.output(d));
    child.stderr?.on('data', (d: Buffer) => this.output(d));
    child.stdin?.on('error', () => {});
    child.on('error', (e) => this.finish(127, null, `could not start ${this.inv.file}: ${e.message}`));
    child.on('close', (code, signal) => this.finish(code ?? (signal ? 128 + (SIGNALS[signal] ?? 0) : 1), signal));
    if (child.pid !== undefined) this.events.onStart(child.pid);
  }

  private finish(code: number, signal: NodeJS.Signals | null, error?: string): void {
    if (this.exited) return;
    this.exited = true;
    if (error) {
      this.tail.push(error + '\n');
      this.write(`\x1b[31m${error}\x1b[0m\n`);
    }
    this.write(`\n\x1b[2m[Consensus Lens] the job ${signal ? `was ended by ${signal}` : 'exited'} with code ${code}\x1b[0m\n`);
    this.file?.end();
    this.events.onExit(code, signal);
    this.closeEmitter.fire(code);
  }

  handleInput(data: string): void {
    // Typed input goes to the job's stdin (Ctrl+C stops the job).
    if (data === '\x03') return this.stop();
    if (this.child?.stdin?.writable) this.child.stdin.write(data.replace(/\r/g, '\n'));
  }

  /** Terminates the job: SIGTERM to its process group, SIGKILL after 5 s. */
  stop(): void {
    const child = this.child;
    if (!child || this.exited) return;
    this.stopRequested = true;
    const kill = (sig: NodeJS.Signals): void => {
      try {
        if (process.platform !== 'win32' && child.pid) process.kill(-child.pid, sig);
        else child.kill(sig);
      } catch {
        /* already gone */
      }
    };
    kill('SIGTERM');
    const t = setTimeout(() => {
      if (!this.exited) kill('SIGKILL');
    }, 5000);
    t.unref?.();
  }

  /** Called by VS Code when the terminal is closed or the task is terminated. */
  close(): void {
    this.stop();
  }

  get running(): boolean {
    return this.child !== null && !this.exited;
  }
}
