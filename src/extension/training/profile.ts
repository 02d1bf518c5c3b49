// Training profiles (setting consensusLens.training.profiles): validation, GPU lists, the resolved
// launch (command, cwd, env, log folder) and how the command is handed to a shell or a configured
// terminal profile. Pure: no 'vscode'.
import { basename, isAbsolute, resolve } from 'node:path';
import { execFile } from 'node:child_process';
import { defaultRunName, formatDate, formatParam, quotedVariables, substitute, type QuoteStyle, type TrainingVariables } from './quote';
import { isRecord } from '../../util/is-record';

export interface TrainingProfile {
  name: string;
  command: string;
  cwd?: string;
  env?: Record<string, string>;
  /** Name of a terminal.integrated.profiles.<os> entry; otherwise the default shell. */
  terminal?: string;
  /** The folder the job writes its logs to (followed in the run explorer). */
  logDir?: string;
  /** Default GPUs ("0,1", "all", "" for none); the launcher asks for the final list. */
  gpus?: string;
}

/** A terminal.integrated.profiles.<os> entry, as far as we use it. */
export interface TerminalProfile {
  path: string | string[];
  args?: string[] | string;
  env?: Record<string, string | null>;
}

export interface ValidationResult {
  profiles: TrainingProfile[];
  /** One message per problem, naming the profile and the field. */
  errors: string[];
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const GPU_TOKEN = /^(?:\d+|(?:GPU|MIG)-[0-9A-Za-z/-]+)$/;

/**
 * A GPU list as CUDA_VISIBLE_DEVICES wants it: indices (ranges a-b allowed) or GPU/MIG UUIDs,
 * separated by commas or spaces; "all"; or "" for none. Returns the normalised list ("0,1,3"),
 * or an error message.
 */
export function parseGpuList(text: string): { ok: true; value: string } | { ok: false; error: string } {
  const t = text.trim();
  if (t === '' || t.toLowerCase() === 'none') return { ok: true, value: '' };
  if (t.toLowerCase() === 'all') return { ok: true, value: 'all' };
  const parts = t.split(/\s*,\s*|\s+/);
  const out: string[] = [];
  for (const p of parts) {
    if (p === '') return { ok: false, error: `empty entry in the GPU list "${text}"` };
    const range = /^(\d+)-(\d+)$/.exec(p);
    if (range) {
      const a = Number(range[1]);
      const b = Number(range[2]);
      if (b < a || b - a > 1023) return { ok: false, error: `bad GPU range "${p}"` };
      for (let i = a; i <= b; i++) out.push(String(i));
      continue;
    }
    if (!GPU_TOKEN.test(p)) return { ok: false, error: `"${p}" is not a GPU index or UUID (write e.g. 0,1 or 0-3 or all)` };
    out.push(/^\d+$/.test(p) ? String(Number(p)) : p);
  }
  const dup = out.find((g, i) => out.indexOf(g) !== i);
  if (dup !== undefined) return { ok: false, error: `GPU ${dup} is listed twice` };
  if (out.length > 1024) return { ok: false, error: 'too many GPUs' };
  return { ok: true, value: out.join(',') };
}

/**
 * Validates the raw setting. Valid profiles are returned even when others are not; every problem
 * is reported (missing command, unknown terminal profile, bad GPU list, quoted variables, …).
 * `terminalProfiles`: the names of the user's terminal.integrated.profiles.<os> entries.
 */
export function validateProfiles(raw: unknown, terminalProfiles: readonly string[]): ValidationResult {
  const profiles: TrainingProfile[] = [];
  const errors: string[] = [];
  if (raw === undefined || raw === null) return { profiles, errors };
  if (!Array.isArray(raw)) return { profiles, errors: ['consensusLens.training.profiles must be an array of profiles'] };
  const names = new Set<string>();
  raw.forEach((p, i) => {
    const where = isRecord(p) && typeof p.name === 'string' && p.name.trim() ? `profile "${p.name}"` : `profile #${i + 1}`;
    const errs: string[] = [];
    const err = (m: string): void => void errs.push(`${where}: ${m}`);
    if (!isRecord(p)) {
      errors.push(`${where}: not an object`);
      return;
    }
    const name = typeof p.name === 'string' ? p.name.trim() : '';
    if (!name) err('missing "name"');
    else if (names.has(name)) err('the name is used by another profile');
    names.add(name);
    const command = typeof p.command === 'string' ? p.command : '';
    if (p.command !== undefined && typeof p.command !== 'string') err('"command" must be a string');
    else if (!command.trim()) err('missing "command"');
    else {
      const quoted = quotedVariables(command);
      if (quoted.length)
        err(`write ${quoted.map((v) => '${' + v + '}').join(', ')} without quotes or backquotes in "command" (for a command substitution use $(…)): values are shell-quoted when substituted`);
    }
    for (const f of ['cwd', 'terminal', 'logDir'] as const) if (p[f] !== undefined && typeof p[f] !== 'string') err(`"${f}" must be a string`);
    let env: Record<string, string> | undefined;
    if (p.env !== undefined) {
      if (!isRecord(p.env)) err('"env" must be an object of NAME: value');
      else {
        env = {};
        for (const [k, v] of Object.entries(p.env)) {
          if (!ENV_NAME.test(k)) err(`environment variable name "${k}" is not valid`);
          else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') env[k] = String(v);
          else err(`environment variable ${k} must be a string`);
        }
      }
    }
    const terminal = typeof p.terminal === 'string' && p.terminal.trim() ? p.terminal.trim() : undefined;
    if (terminal && !terminalProfiles.includes(terminal)) {
      err(`unknown terminal profile "${terminal}"${terminalProfiles.length ? ` (known: ${terminalProfiles.join(', ')})` : ' (no terminal.integrated.profiles are configured)'}`);
    }
    let gpus: string | undefined;
    if (p.gpus !== undefined) {
      const text = Array.isArray(p.gpus) ? p.gpus.join(',') : typeof p.gpus === 'string' || typeof p.gpus === 'number' ? String(p.gpus) : null;
      const parsed = text === null ? ({ ok: false, error: '"gpus" must be a string like "0,1" or an array of indices' } as const) : parseGpuList(text);
      if (!parsed.ok) err(`bad GPU list: ${parsed.error}`);
      else gpus = parsed.value;
    }
    const known = new Set<string>(['name', 'command', 'cwd', 'env', 'terminal', 'logDir', 'gpus', 'description']);
    for (const k of Object.keys(p)) if (!known.has(k)) err(`unknown field "${k}"`);
    errors.push(...errs);
    if (errs.length) return;
    profiles.push({
      name,
      command,
      ...(typeof p.cwd === 'string' && p.cwd.trim() ? { cwd: p.cwd } : {}),
      ...(env ? { env } : {}),
      ...(terminal ? { terminal } : {}),
      ...(typeof p.logDir === 'string' && p.logDir.trim() ? { logDir: p.logDir } : {}),
      ...(gpus !== undefined ? { gpus } : {}),
    });
  });
  return { profiles, errors };
}

export interface WhatIf {
  operator: string;
  params: Record<string, number>;
}

export interface LaunchContext {
  workspaceFolder: string;
  date: Date;
  gpus: string;
  runName?: string;
}

/** What a launch runs, all variables substituted. */
export interface ResolvedLaunch {
  profile: string;
  runName: string;
  variables: TrainingVariables;
  command: string;
  cwd: string;
  /** The profile's env (substituted, unquoted) and the CONSENSUS_LENS_* variables. */
  env: Record<string, string>;
  logDir: string | null;
  gpus: string;
}

export function trainingVariables(profile: TrainingProfile, what: WhatIf, ctx: LaunchContext): TrainingVariables {
  const date = formatDate(ctx.date);
  return {
    operator: what.operator,
    kappa: formatParam(what.params.kappa),
    tau: formatParam(what.params.tau),
    alpha: formatParam(what.params.alpha),
    omega: formatParam(what.params.omega),
    lambda: formatParam(what.params.lambda),
    gpus: ctx.gpus,
    runName: ctx.runName ?? defaultRunName(profile.name, what.operator, date),
    workspaceFolder: ctx.workspaceFolder,
    date,
  };
}

/** Substitutes the variables: quoted (for `style`) in the command, verbatim in cwd, env and log folder. */
export function resolveLaunch(profile: TrainingProfile, what: WhatIf, ctx: LaunchContext, style: QuoteStyle): ResolvedLaunch {
  const vars = trainingVariables(profile, what, ctx);
  const abs = (p: string): string => (isAbsolute(p) ? p : resolve(ctx.workspaceFolder || process.cwd(), p));
  const cwd = abs(profile.cwd ? substitute(profile.cwd, vars, null) : ctx.workspaceFolder || process.cwd());
  const logDir = profile.logDir ? resolve(cwd, substitute(profile.logDir, vars, null)) : null;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(profile.env ?? {})) env[k] = substitute(v, vars, null);
  const exported: Record<string, string> = {
    CONSENSUS_LENS_OPERATOR: vars.operator,
    CONSENSUS_LENS_KAPPA: vars.kappa,
    CONSENSUS_LENS_TAU: vars.tau,
    CONSENSUS_LENS_ALPHA: vars.alpha,
    CONSENSUS_LENS_OMEGA: vars.omega,
    CONSENSUS_LENS_LAMBDA: vars.lambda,
    CONSENSUS_LENS_GPUS: vars.gpus,
    CONSENSUS_LENS_RUN_NAME: vars.runName,
    CONSENSUS_LENS_PROFILE: profile.name,
  };
  if (logDir) exported.CONSENSUS_LENS_LOG_DIR = logDir;
  // The job's output is a pipe (captured for the exit report): Python would block-buffer it.
  if (env.PYTHONUNBUFFERED === undefined) env.PYTHONUNBUFFERED = '1';
  return { profile: profile.name, runName: vars.runName, variables: vars, command: substitute(profile.command, vars, style), cwd, env: { ...env, ...exported }, logDir, gpus: ctx.gpus };
}

const POSIX_SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ksh93', 'mksh', 'pdksh', 'yash', 'ash', 'busybox']);
const PWSH = new Set(['pwsh', 'powershell']);
/**
 * Shells whose quoting the launcher does not implement: csh/tcsh (a newline inside quotes is an
 * error, `!` is history even in single quotes), nu, xonsh, elvish, rc/es (other quoting rules).
 * A launch through one of them is refused, never quoted as if it were POSIX.
 */
const REFUSED_SHELLS = new Set(['csh', 'tcsh', 'nu', 'nushell', 'xonsh', 'elvish', 'rc', 'es', 'ion', 'murex']);
const COMMAND_FLAGS = new Set(['-c', '-lc', '-ic', '-Command', '-command', '-c-', '--command']);

/** The executable's base name without .exe, lower case. */
function exeName(path: string): string {
  return basename(path.replace(/\\/g, '/'))
    .toLowerCase()
    .replace(/\.exe$/, '');
}

/**
 * How values are quoted for the program that parses the command: PowerShell, cmd.exe, fish, or
 * POSIX (the POSIX shells, and wrappers such as ssh or srun, whose remote or inner shell is taken
 * to be POSIX); null for a shell the launcher cannot quote for (the launch is refused).
 */
export function quoteStyleFor(shellPath: string): QuoteStyle | null {
  const name = exeName(shellPath);
  if (PWSH.has(name)) return 'powershell';
  if (name === 'cmd') return 'cmd';
  if (name === 'fish') return 'fish';
  if (REFUSED_SHELLS.has(name)) return null;
  return 'posix';
}

/**
 * The probes that tell fish from a POSIX shell by how it parses, not by its name (fish started
 * through `env`, or installed under another name, would otherwise get POSIX quoting, which fish
 * reads differently): fish reads `\'` inside single quotes as an escaped quote, so the first
 * prints `a'b`; a POSIX shell ends the quote there and fails on the unterminated one. The second
 * checks the POSIX form (`'\''`) gives `a'b`.
 */
const FISH_PROBE = "printf %s 'a\\'b'";
const POSIX_PROBE = "printf %s 'a'\\''b'";

export interface ProbeResult {
  code: number | null;
  stdout: string;
}

/** Runs one probe invocation (at most 5 s, no input). */
export function runProbe(inv: Invocation): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...process.env, ...inv.env })) if (typeof v === 'string') env[k] = v;
    execFile(inv.file, inv.args, { env, timeout: 5000, windowsVerbatimArguments: inv.verbatim, maxBuffer: 1 << 16 }, (err, stdout) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : null) : 0;
      resolve({ code, stdout: String(stdout) });
    });
  });
}

/**
 * The quoting for the program that will parse the command, found by running it (module note at
 * FISH_PROBE) when it is a shell started with a command flag: a POSIX shell name, fish, or any
 * executable whose arguments end with `-c` (`env fish -c`, a renamed fish). PowerShell and cmd.exe
 * go by name; a wrapper that is not run with a command flag (ssh host, srun …) is taken to run a
 * POSIX shell, as before. A shell that passes neither probe gets null: the launch is refused.
 */
export async function probeQuoteStyle(
  terminal: TerminalProfile | undefined,
  defaultShell: string | undefined,
  exists: (p: string) => boolean = () => true,
  run: (inv: Invocation) => Promise<ProbeResult> = runProbe,
): Promise<QuoteStyle | null> {
  const shell = invocationShell(terminal, defaultShell, exists);
  const byName = quoteStyleFor(shell);
  if (byName !== 'posix' && byName !== 'fish') return byName;
  const fishProbe = invocation(FISH_PROBE, terminal, defaultShell, exists);
  const name = exeName(shell);
  const flag = fishProbe.args[fishProbe.args.length - 2] ?? '';
  if (!POSIX_SHELLS.has(name) && name !== 'fish' && !COMMAND_FLAGS.has(flag)) return byName;
  const said = (r: ProbeResult): boolean => r.code === 0 && r.stdout.endsWith("a'b");
  if (said(await run(fishProbe))) return 'fish';
  if (said(await run(invocation(POSIX_PROBE, terminal, defaultShell, exists)))) return 'posix';
  return null;
}

export interface Invocation {
  file: string;
  args: string[];
  /** The terminal profile's own env (null unsets). */
  env: Record<string, string | null>;
  /** Pass the arguments to the Windows process as written (cmd.exe parses its own command line). */
  verbatim?: boolean;
}

/**
 * The process that runs `command`:
 * - no terminal profile: `defaultShell -c command` (the user's shell when it is a POSIX shell,
 *   else /bin/sh, so the quoting is POSIX);
 * - a terminal profile: its path and args, then, when the args do not already end with a
 *   command flag (-c, -lc, -Command), `-c` for a known shell (`-Command` for PowerShell), then the
 *   command as the last argument. Anything else (ssh host, srun --pty …) gets the command as its
 *   last argument, which ssh runs in the remote shell.
 * - cmd.exe: `/d /s /c "command"` passed verbatim (as Node's own `shell` option does), so cmd
 *   strips exactly the outer quotes and the command's own quoting is what cmd sees.
 */
export function invocation(command: string, terminal: TerminalProfile | undefined, defaultShell: string | undefined, exists: (p: string) => boolean = () => true): Invocation {
  if (!terminal) {
    const sh = invocationShell(undefined, defaultShell);
    const style = quoteStyleFor(sh);
    if (style === 'cmd') return { file: sh, args: ['/d', '/s', '/c', `"${command}"`], env: {}, verbatim: true };
    return { file: sh, args: [style === 'powershell' ? '-Command' : '-c', command], env: {} };
  }
  const file = invocationShell(terminal, defaultShell, exists);
  let args = Array.isArray(terminal.args) ? [...terminal.args] : typeof terminal.args === 'string' && terminal.args.trim() ? terminal.args.trim().split(/\s+/) : [];
  const name = exeName(file);
  if (name === 'cmd') {
    args = args.filter((a) => !/^\/[cdks]$/i.test(a));
    return { file, args: [...args, '/d', '/s', '/c', `"${command}"`], env: { ...(terminal.env ?? {}) }, verbatim: true };
  }
  if (!COMMAND_FLAGS.has(args[args.length - 1] ?? '')) {
    if (PWSH.has(name)) args.push('-Command');
    else if (POSIX_SHELLS.has(name) || name === 'fish') args.push('-c');
  }
  args.push(command);
  return { file, args, env: { ...(terminal.env ?? {}) } };
}

/**
 * The shell (or wrapper) that will parse the command, so values are quoted for it: the terminal
 * profile's executable; else the default shell when it is a POSIX shell (or PowerShell or cmd.exe
 * on Windows); else /bin/sh.
 */
export function invocationShell(terminal: TerminalProfile | undefined, defaultShell: string | undefined, exists: (p: string) => boolean = () => true): string {
  if (terminal) {
    const paths = Array.isArray(terminal.path) ? terminal.path : [terminal.path];
    return paths.find((p) => exists(p)) ?? paths[0];
  }
  if (defaultShell && POSIX_SHELLS.has(exeName(defaultShell))) return defaultShell;
  if (defaultShell && /^[a-z]:|\\/i.test(defaultShell) && (quoteStyleFor(defaultShell) === 'powershell' || quoteStyleFor(defaultShell) === 'cmd')) return defaultShell;
  return '/bin/sh';
}

/**
 * The default shell of a profile without `terminal`, from user-level sources only: the User
 * settings' `terminal.integrated.defaultProfile.<os>` (looked up in the default and User terminal
 * profiles), else the login shell (passwd; ComSpec on Windows). Never `vscode.env.shell`: it
 * follows the workspace's settings, and a workspace must not choose the program our commands run
 * in.
 */
export function userDefaultShell(userDefaultProfile: string | undefined, profiles: unknown, loginShell: string | undefined, exists: (p: string) => boolean = () => true): string | undefined {
  if (userDefaultProfile) {
    const tp = terminalProfile(profiles, userDefaultProfile);
    if (tp) {
      const paths = Array.isArray(tp.path) ? tp.path : [tp.path];
      const found = paths.find((p) => exists(p));
      if (found) return found;
    }
  }
  return loginShell || undefined;
}

/** The names of terminal profiles usable by a training profile (entries set to null are hidden). */
export function terminalProfileNames(profiles: unknown): string[] {
  if (!isRecord(profiles)) return [];
  return Object.entries(profiles)
    .filter(([, v]) => isRecord(v) && (typeof v.path === 'string' || (Array.isArray(v.path) && v.path.every((x) => typeof x === 'string'))))
    .map(([k]) => k);
}

export function terminalProfile(profiles: unknown, name: string): TerminalProfile | undefined {
  if (!isRecord(profiles)) return undefined;
  const v = profiles[name];
  if (!isRecord(v)) return undefined;
  if (typeof v.path !== 'string' && !(Array.isArray(v.path) && v.path.every((x) => typeof x === 'string'))) return undefined;
  const env = isRecord(v.env) ? (Object.fromEntries(Object.entries(v.env).filter(([, x]) => typeof x === 'string' || x === null)) as Record<string, string | null>) : undefined;
  return { path: v.path as string | string[], args: Array.isArray(v.args) ? v.args.filter((x): x is string => typeof x === 'string') : typeof v.args === 'string' ? v.args : undefined, env };
}
