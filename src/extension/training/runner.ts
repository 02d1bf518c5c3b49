// A training job behind a Pseudoterminal that a VS Code task (CustomExecution) shows in its own
// terminal. Why this and not a ShellExecution:
//   - the exit code is the job process's own (job-process.ts; a signal ends as 128 + its number);
//   - the output is captured as it streams (the last lines go into the exit notification, all of
//     it into a file under the extension's storage) without wrapping the user's command in `tee`
//     (which loses the exit status in POSIX sh and cannot work behind an ssh wrapper);
//   - a configured terminal profile is honoured the same way: its path, args and env are the
//     process that runs the command (see invocation() in profile.ts).
// The cost: the job's stdout/stderr are pipes, not a TTY (PYTHONUNBUFFERED=1 is set so Python
// output is not held back; programs that insist on a TTY, e.g. password prompts, will not work —
// use keys/agents for ssh). Stop sends SIGTERM to the job's process group, SIGKILL 5 s later.
import * as vscode from 'vscode';
import { JobProcess, jobEnv } from './job-process';
import type { Invocation } from './profile';

export { cleanEnv } from './job-process';

export interface JobProcessEvents {
  onStart(pid: number | undefined): void;
  onExit(code: number, signal: NodeJS.Signals | null): void;
}

export class JobPty implements vscode.Pseudoterminal {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  private readonly closeEmitter = new vscode.EventEmitter<number | undefined>();
  readonly onDidWrite = this.writeEmitter.event;
  readonly onDidClose = this.closeEmitter.event;
  private readonly proc: JobProcess;

  constructor(
    readonly inv: Invocation,
    private readonly opts: { cwd: string; env: Record<string, string>; command: string; outputFile: string; banner: string },
    events: JobProcessEvents,
  ) {
    this.proc = new JobProcess(
      inv,
      { cwd: opts.cwd, env: jobEnv(process.env, inv.env, opts.env), outputFile: opts.outputFile },
      {
        onOutput: (s) => this.write(s),
        onStart: (pid) => events.onStart(pid),
        onExit: (code, signal, error) => {
          if (error) this.write(`\x1b[31m${error}\x1b[0m\n`);
          this.write(`\n\x1b[2m[Consensus Lens] the job ${signal ? `was ended by ${signal}` : 'exited'} with code ${code}\x1b[0m\n`);
          events.onExit(code, signal);
          this.closeEmitter.fire(code);
        },
      },
    );
  }

  get tail(): JobProcess['tail'] {
    return this.proc.tail;
  }
  get stopRequested(): boolean {
    return this.proc.stopRequested;
  }
  set stopRequested(v: boolean) {
    this.proc.stopRequested = v;
  }
  get running(): boolean {
    return this.proc.running;
  }

  private write(text: string): void {
    this.writeEmitter.fire(text.replace(/\r?\n/g, '\r\n'));
  }

  open(): void {
    this.write(`\x1b[2m${this.opts.banner}\x1b[0m\n\x1b[1m$ ${this.opts.command}\x1b[0m\n`);
    this.proc.start();
  }

  handleInput(data: string): void {
    // Typed input goes to the job's stdin; Ctrl+C stops the job.
    if (data === '\x03') return this.stop();
    this.proc.write(data.replace(/\r/g, '\n'));
  }

  stop(): void {
    this.proc.stop();
  }

  /** Called by VS Code when the terminal is closed or the task is terminated. */
  close(): void {
    this.proc.stop();
  }
}
