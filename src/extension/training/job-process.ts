// The process of a training job: spawned in its own process group, output streamed (and kept:
// the last 16 KB in memory, all of it in a file), exit code known, stoppable with its children.
// Pure Node (no 'vscode'): runner.ts puts it behind a task's pseudoterminal; unit tests drive it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { OutputTail } from './gpus';
import type { Invocation } from './profile';
import { errorMessage } from '../../util/errors';

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGPIPE: 13, SIGTERM: 15 };

/** The exit code of a process that ended by a signal: 128 + its number (as shells report it). */
export function signalExitCode(signal: NodeJS.Signals | null): number {
  return signal ? 128 + (SIGNALS[signal] ?? 0) : 1;
}

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

/** The job's environment: the host's (cleaned), then the terminal profile's (null unsets), then the launch's. */
export function jobEnv(base: NodeJS.ProcessEnv, terminalEnv: Record<string, string | null>, launchEnv: Record<string, string>): Record<string, string> {
  const env = cleanEnv(base);
  for (const [k, v] of Object.entries(terminalEnv)) {
    if (v === null) delete env[k];
    else env[k] = v;
  }
  return Object.assign(env, launchEnv);
}

export interface JobProcessHandlers {
  onOutput(text: string): void;
  onStart?(pid: number): void;
  /** code: the exit code; a signal ends as 128 + its number; 127 when the program could not start. */
  onExit(code: number, signal: NodeJS.Signals | null, error?: string): void;
}

export class JobProcess {
  readonly tail = new OutputTail();
  private child: ChildProcess | null = null;
  private file: WriteStream | null = null;
  private exited = false;
  stopRequested = false;

  constructor(
    private readonly inv: Invocation,
    private readonly opts: { cwd: string; env: Record<string, string>; outputFile?: string; killAfterMs?: number },
    private readonly handlers: JobProcessHandlers,
  ) {}

  start(): void {
    if (this.opts.outputFile) {
      try {
        mkdirSync(dirname(this.opts.outputFile), { recursive: true });
        this.file = createWriteStream(this.opts.outputFile, { flags: 'a' });
        this.file.on('error', () => (this.file = null));
      } catch {
        this.file = null;
      }
    }
    let child: ChildProcess;
    try {
      child = spawn(this.inv.file, this.inv.args, {
        cwd: this.opts.cwd,
        env: this.opts.env,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: process.platform !== 'win32',
        windowsVerbatimArguments: this.inv.verbatim === true,
      });
    } catch (e) {
      this.finish(127, null, `could not start ${this.inv.file}: ${errorMessage(e)}`);
      return;
    }
    this.child = child;
    const out = (d: Buffer): void => {
      const s = d.toString('utf8');
      this.tail.push(s);
      this.file?.write(d);
      this.handlers.onOutput(s);
    };
    child.stdout?.on('data', out);
    child.stderr?.on('data', out);
    child.stdin?.on('error', () => {});
    child.on('error', (e) => this.finish(127, null, `could not start ${this.inv.file}: ${e.message}`));
    child.on('close', (code, signal) => this.finish(code ?? signalExitCode(signal), signal));
    if (child.pid !== undefined) this.handlers.onStart?.(child.pid);
  }

  private finish(code: number, signal: NodeJS.Signals | null, error?: string): void {
    if (this.exited) return;
    this.exited = true;
    if (error) this.tail.push(error + '\n');
    this.file?.end();
    this.handlers.onExit(code, signal, error);
  }

  write(data: string): void {
    if (this.child?.stdin?.writable) this.child.stdin.write(data);
  }

  /** SIGTERM to the job's process group (the command and its children), SIGKILL after a grace period. */
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
    }, this.opts.killAfterMs ?? 5000);
    t.unref?.();
  }

  get running(): boolean {
    return this.child !== null && !this.exited;
  }
}
