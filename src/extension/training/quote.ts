// Shell quoting and ${variable} substitution for training profiles. Pure: no 'vscode',
// so node:test drives it directly.
//
// Rule: a value substituted into a *command line* is quoted for the shell that will parse it, so
// it is always one word with exactly its characters (spaces, quotes, $, backticks, newlines, …
// never reach the shell as syntax). Values substituted into cwd, env and the log folder are not
// quoted: no shell parses them. Variables must therefore be written bare in a command
// (`--run ${runName}`, not `--run "${runName}"`); validateProfile reports quoted ones.

export type QuoteStyle = 'posix' | 'powershell';

/** Characters that never need quoting in a POSIX shell word. */
const POSIX_SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * POSIX sh quoting: the value as one word. Safe values stay bare (`0.4`, `runs/a-1`); anything
 * else is single-quoted, with each `'` written as `'\''`. Inside single quotes every character,
 * newline included, is literal in sh, bash, dash, zsh and ksh.
 */
export function quotePosix(value: string): string {
  if (value === '') return "''";
  if (POSIX_SAFE.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** PowerShell: single-quoted literal string, `'` doubled (also the typographic single quotes). */
export function quotePowerShell(value: string): string {
  if (value !== '' && POSIX_SAFE.test(value)) return value;
  return `'${value.replace(/['\u2018\u2019\u201a\u201b]/g, (q) => q + q)}'`;
}

export function quote(value: string, style: QuoteStyle): string {
  return style === 'powershell' ? quotePowerShell(value) : quotePosix(value);
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

/** Known variables used in a template. */
export function variablesIn(template: string): TrainingVariable[] {
  const out: TrainingVariable[] = [];
  for (const m of template.matchAll(VAR_RE)) if (KNOWN.has(m[1]) && !out.includes(m[1] as TrainingVariable)) out.push(m[1] as TrainingVariable);
  return out;
}

/**
 * Known variables that sit inside quotes in a POSIX command template (their quoted value would be
 * quoted twice). A small lexer: single quotes, double quotes, backslash escapes outside single
 * quotes.
 */
export function quotedVariables(template: string): TrainingVariable[] {
  const out: TrainingVariable[] = [];
  let state: 'none' | 'single' | 'double' = 'none';
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (state === 'single') {
      if (c === "'") state = 'none';
    } else if (c === '\\') {
      i++;
      continue;
    } else if (state === 'double' && c === '"') state = 'none';
    else if (state === 'none' && c === "'") state = 'single';
    else if (state === 'none' && c === '"') state = 'double';
    if (c === '$' && template[i + 1] === '{' && state !== 'none') {
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
