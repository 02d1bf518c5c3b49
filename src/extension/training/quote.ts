// Shell quoting and ${variable} substitution for training profiles. Pure: no 'vscode',
// so node:test drives it directly.
//
// Rule: a value substituted into a *command line* is quoted for the shell that will parse it, so
// it is always one word with exactly its characters (spaces, quotes, $, backticks, newlines, …
// never reach the shell as syntax). Values substituted into cwd, env and the log folder are not
// quoted: no shell parses them. Variables must therefore be written bare in a command
// (`--run ${runName}`, not `--run "${runName}"`); validateProfile reports quoted ones.

export type QuoteStyle = 'posix' | 'fish' | 'powershell' | 'cmd';

/** A value that cannot be written as one literal word for the shell that will parse the command. */
export class UnquotableError extends Error {}

/** Characters that never need quoting in a POSIX shell word. */
const POSIX_SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;
/** fish: the same set without `%` (process expansion in fish < 3) and `@`. */
const FISH_SAFE = /^[A-Za-z0-9_+=:,./-]+$/;
/** PowerShell: no `@`, `%`, `,` or `=` bare. */
const PWSH_SAFE = /^[A-Za-z0-9_+:./-]+$/;
/** cmd.exe: no `%` (variable expansion), `@`, `,` and `=` (argument separators for cmd). */
const CMD_SAFE = /^[A-Za-z0-9_+:./\\-]+$/;

/**
 * POSIX sh quoting: the value as one word. Safe values stay bare (`0.4`, `runs/a-1`); anything
 * else is single-quoted, with each `'` written as `'\''`. Inside single quotes every character,
 * newline included, is literal in sh, bash, dash, zsh, ksh and mksh.
 */
export function quotePosix(value: string): string {
  if (value === '') return "''";
  // A bare word starting with `=` is zsh's EQUALS expansion (`=ls` is /usr/bin/ls): quoted.
  if (POSIX_SAFE.test(value) && value[0] !== '=') return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * fish quoting. fish differs from POSIX inside single quotes: `\'` and `\\` are escapes there, so
 * the POSIX form `'a\'\''…'` of a value `a\'…` ends the quote early (a folder named
 * `a\'; touch PWN; #` would run touch). Single-quoted, with `\` and `'` backslash-escaped;
 * everything else (newlines, `$`, `(`, `*`, `{`) is literal inside fish's single quotes.
 */
export function quoteFish(value: string): string {
  if (value !== '' && FISH_SAFE.test(value)) return value;
  return `'${value.replace(/[\\']/g, (c) => '\\' + c)}'`;
}

/**
 * PowerShell: single-quoted literal string, `'` doubled (also the typographic single quotes).
 * Bare words are narrower than POSIX's: `@` splats, `,` makes an array, `%` starts `--%`.
 */
export function quotePowerShell(value: string): string {
  if (value !== '' && PWSH_SAFE.test(value)) return value;
  return `'${value.replace(/['\u2018\u2019\u201a\u201b]/g, (q) => q + q)}'`;
}

/**
 * cmd.exe (`cmd /d /s /c "<command>"`): a double-quoted word keeps `& | < > ^ ( )` and spaces
 * literal, but cmd has no way to write a literal `"` inside it, and `%NAME%` (and `!NAME!` with
 * delayed expansion) is expanded even inside quotes; a line break ends the command. Values with
 * `"`, `%`, `!` or a line break are refused (UnquotableError) rather than passed on. Trailing
 * backslashes are doubled so the program's own argument parser (the MSVC rules: 2n backslashes
 * before a quote are n backslashes) does not read the closing quote as escaped.
 */
export function quoteCmd(value: string): string {
  if (value !== '' && CMD_SAFE.test(value)) return value;
  if (/["%!\r\n\0]/.test(value)) throw new UnquotableError(`the value ${JSON.stringify(value)} cannot be passed safely to cmd.exe (it contains " % ! or a line break)`);
  return `"${value.replace(/\\+$/, (b) => b + b)}"`;
}

export function quote(value: string, style: QuoteStyle): string {
  switch (style) {
    case 'powershell':
      return quotePowerShell(value);
    case 'fish':
      return quoteFish(value);
    case 'cmd':
      return quoteCmd(value);
    default:
      return quotePosix(value);
  }
}

/** The variables a profile may use. */
export const TRAINING_VARIABLES = ['operator', 'kappa', 'tau', 'alpha', 'omega', 'lambda', 'gpus', 'runName', 'workspaceFolder', 'date'] as const;
export type TrainingVariable = (typeof TRAINING_VARIABLES)[number];
export type TrainingVariables = Record<TrainingVariable, string>;

const VAR_RE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const KNOWN = new Set<string>(TRAINING_VARIABLES);

/**
 * Replaces ${name} for the known variables; any other ${…} (e.g. ${HOME}) is left for the shell.
 * `style` quotes each value for a shell command line; `null` inserts values verbatim.
 */
export function substitute(template: string, vars: TrainingVariables, style: QuoteStyle | null): string {
  return template.replace(VAR_RE, (whole, name: string) => {
    if (!KNOWN.has(name)) return whole;
    const v = vars[name as TrainingVariable];
    return style ? quote(v, style) : v;
  });
}

/**
 * Known variables that sit inside quotes in a POSIX command template (their quoted value would be
 * quoted twice), or inside backquotes (a command substitution re-reads its text after removing
 * backslashes before `\`` `\\` `$`, so a quoted value's backslashes would change its quoting).
 * A small lexer: single quotes, double quotes, backquotes, backslash escapes outside single quotes.
 */
export function quotedVariables(template: string): TrainingVariable[] {
  const out: TrainingVariable[] = [];
  let state: 'none' | 'single' | 'double' = 'none';
  let backquote = false;
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (state === 'single') {
      if (c === "'") state = 'none';
    } else if (c === '\\') {
      i++;
      continue;
    } else if (c === '`') backquote = !backquote;
    else if (state === 'double' && c === '"') state = 'none';
    else if (state === 'none' && c === "'") state = 'single';
    else if (state === 'none' && c === '"') state = 'double';
    if (c === '$' && template[i + 1] === '{' && (state !== 'none' || backquote)) {
      const m = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(template.slice(i));
      if (m && KNOWN.has(m[1]) && !out.includes(m[1] as TrainingVariable)) out.push(m[1] as TrainingVariable);
    }
  }
  return out;
}

/** `${date}`: local time as YYYYMMDD-HHMMSS (safe in paths and run names). */
export function formatDate(d: Date): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

/** A run name made of safe characters: profile, operator and the date. */
export function defaultRunName(profile: string, operator: string, date: string): string {
  const clean = (s: string): string => s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'run';
  return `${clean(profile)}-${clean(operator)}-${date}`;
}

/** A parameter value as text: shortest round-trip form (0.4, not 0.4000000000000001 from a slider). */
export function formatParam(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '';
  return String(Number(v.toPrecision(12)));
}
