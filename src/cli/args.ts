// The command line's one option table and its strict parser (Node's util.parseArgs, strict).
//
// Every flag a command takes is either an operator parameter (generated from the engine's
// PARAM_SPECS, the one parameter table) or a line of OPTIONS below, which names the commands that
// take it. A flag a command does not take, a misspelled flag, a missing value or a number that is
// not written in decimal is a usage error (exit 2), never a default used silently. The same table
// generates each command's --help (flags, defaults, ranges).

import { parseArgs as nodeParseArgs } from 'node:util';
import { errnoCode, errorMessage } from '../util/errors';
import { DEFAULT_PARAMS, OPERATOR_IDS, PARAM_SPECS, checkValue, parseOperatorList, type OperatorId, type ParamSpec, type Params } from '../engine';

export interface CliIO {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export class UsageError extends Error {}

/** The commands parsed by this table (equal and extract take answers that may start with "-"). */
export type Command = 'score' | 'sweep' | 'report' | 'health' | 'index' | 'compare' | 'watch' | 'serve';

export interface OptionDef {
  type: 'string' | 'boolean';
  /** The value's name in the help (string options). */
  value?: string;
  help: string;
  /** The default, as the help prints it (per command when it differs). */
  default?: string | ((command: Command) => string);
  commands: readonly Command[];
}

const READERS: readonly Command[] = ['score', 'sweep', 'report', 'health', 'index'];

/** Every flag that is not an operator parameter: one line each. */
export const OPTIONS: Readonly<Record<string, OptionDef>> = {
  operators: { type: 'string', value: 'LIST', help: `operators to run, comma-separated (${OPERATOR_IDS.join(',')})`, default: (c) => (c === 'sweep' ? 'core' : 'every operator the log allows'), commands: ['score', 'sweep', 'report', 'watch'] },
  'configured-operator': { type: 'string', value: 'OP', help: 'the operator the run trained with, for the reward-mismatch check', default: 'the one each group logs ("operator"), else majority', commands: ['score', 'report', 'health', 'compare', 'watch'] },
  'adv-scale': { type: 'string', value: 'group|none', help: 'GRPO advantage scaling (none: Dr. GRPO)', default: 'group', commands: ['score', 'report', 'health', 'watch', 'serve'] },
  'ground-truth': { type: 'string', value: 'auto|use|ignore', help: 'logged ground truth (a diagnostic): use takes it as logged, ignore drops it, auto uses it and says when a verl "gts" looks like the vote (docs/contract.md#ground-truth)', default: 'auto', commands: ['score', 'sweep', 'report', 'index', 'watch', 'health', 'compare'] },
  'max-group-size': { type: 'string', value: 'N', help: 'larger groups are reported and skipped', default: '4096', commands: ['score', 'sweep', 'report', 'index', 'serve'] },
  jobs: { type: 'string', value: 'N', help: 'scoring threads, 0 = in-process (0–64)', default: 'the number of cores, at most 4', commands: ['score', 'sweep', 'report', 'health', 'index', 'compare', 'serve'] },
  shard: { type: 'string', value: 'i/K', help: 'only the questions whose id hashes to bucket i of K, output made to be merged (python -m consensus_lens.ray; docs/scale.md)', commands: ['score', 'sweep'] },
  json: { type: 'boolean', help: 'print JSON (docs/schemas/) instead of text', commands: ['report', 'health', 'index', 'compare'] },
  'operator-a': { type: 'string', value: 'OP', help: 'the operator run A is read with', default: '--configured-operator, else majority', commands: ['compare'] },
  'operator-b': { type: 'string', value: 'OP', help: 'the operator run B is read with (RUN RUN with two operators compares them on one run)', default: '--configured-operator, else majority', commands: ['compare'] },
  html: { type: 'string', value: 'FILE', help: 'also write a self-contained report page', commands: ['report'] },
  title: { type: 'string', value: 'TEXT', help: 'the report page title', commands: ['report'] },
  progress: { type: 'boolean', help: 'a progress line on stderr even when it is not a terminal', default: 'on a terminal only', commands: READERS },
  'no-cache': { type: 'boolean', help: 'read the run from its files and write no cache ($CONSENSUS_LENS_CACHE_DIR, $XDG_CACHE_HOME/consensus-lens or ~/.cache/consensus-lens)', commands: ['score', 'sweep', 'report', 'health'] },
  'allow-skipped': { type: 'boolean', help: 'exit 0 even when input lines were skipped (else exit 3)', commands: READERS },
  poll: { type: 'boolean', help: 'poll files instead of file-system events (automatic on network file systems)', commands: ['watch'] },
  'poll-ms': { type: 'string', value: 'MS', help: 'polling interval (≥ 50)', commands: ['watch'] },
  'idle-ms': { type: 'string', value: 'MS', help: 'a roll-out group is complete after this long without a new roll-out', default: '2000', commands: ['watch'] },
  stdio: { type: 'boolean', help: 'serve on standard input/output (the only transport)', commands: ['serve'] },
  operator: { type: 'string', value: 'OP', help: 'the operator of requests that name none', commands: ['serve'] },
  timing: { type: 'boolean', help: 'add timings to each answer', commands: ['serve'] },
  'request-timeout': { type: 'string', value: 'S', help: 'answer every request within S seconds (worker threads), else an error', default: '300', commands: ['serve'] },
  help: { type: 'boolean', help: 'print this help', commands: ['score', 'sweep', 'report', 'health', 'index', 'compare', 'watch', 'serve'] },
};

/** Commands that take the operator parameters (sweep: as lists). */
const PARAM_COMMANDS: readonly Command[] = ['score', 'sweep', 'report', 'health', 'compare', 'watch', 'serve'];

export interface CommandDef {
  usage: string;
  summary: string;
}

export const COMMAND_DEFS: Readonly<Record<Command, CommandDef>> = {
  score: { usage: 'score [PATH|-]', summary: 'score every group of a run (a folder, a log file, or - for native JSONL on stdin): one JSON line per group' },
  sweep: { usage: 'sweep PATH --kappa 0:1:0.1 [--tau LIST] ...', summary: 're-score the run for every combination of parameter lists (a,b,c or start:stop:step): one JSON line per setting and operator' },
  report: { usage: 'report PATH [--json] [--html FILE]', summary: 'per-step summary of a run: regimes, flips against the vote, gates, accuracy; training and validation streams apart; each run of a folder on its own' },
  health: { usage: 'health PATH [--json]', summary: 'run health: timeline, change-point alarms, confidence premise, reward bugs, degenerate roll-outs' },
  index: { usage: 'index PATH [--json]', summary: 'build or refresh the run\'s persisted cache (features score, report, sweep and health read instead of the texts); one summary line' },
  compare: { usage: 'compare RUN_A RUN_B [--json]', summary: 'two runs (or two operators on one run: --operator-a, --operator-b) side by side: per-step accuracy, reward accuracy, majority ratio, gate, learning signal, alarms; where the labels part' },
  watch: { usage: 'watch PATH', summary: 'follow a run (waiting for it to appear); one score line per newly completed group; Ctrl-C exits 130' },
  serve: { usage: 'serve --stdio', summary: 'the reward worker for training loops (one JSON request per line)' },
};

export interface ParsedArgs {
  command: Command;
  positionals: string[];
  flags: Map<string, string | true>;
}

/** The flags `command` takes: name → type. */
export function optionsOf(command: Command): Map<string, OptionDef> {
  const out = new Map<string, OptionDef>();
  for (const [name, def] of Object.entries(OPTIONS)) if (def.commands.includes(command)) out.set(name, def);
  if (PARAM_COMMANDS.includes(command)) for (const s of PARAM_SPECS) out.set(s.flag, { type: 'string', value: command === 'sweep' ? 'LIST' : 'X', help: s.description, commands: [command] });
  return out;
}

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  const d = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = d[0];
    d[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const t = d[j];
      d[j] = Math.min(d[j] + 1, d[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = t;
    }
  }
  return d[b.length];
}

/** The closest flag of `names` to `name` (a typo or a prefix), or undefined. */
export function suggest(name: string, names: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const n of names) {
    const dd = n.startsWith(name) && name.length >= 3 ? 0.5 : distance(name, n);
    if (dd < bestD) [best, bestD] = [n, dd];
  }
  return best !== undefined && bestD <= Math.max(1, Math.min(3, Math.floor(name.length / 3))) ? best : undefined;
}

function unknownFlag(command: Command, raw: string, name: string, known: Map<string, OptionDef>): UsageError {
  const takers = (Object.keys(COMMAND_DEFS) as Command[]).filter((c) => c !== command && optionsOf(c).has(name));
  if (takers.length) return new UsageError(`${command} does not take ${raw} (${takers.join(', ')} ${takers.length === 1 ? 'does' : 'do'}); see consensus-lens ${command} --help`);
  const s = suggest(name, known.keys());
  return new UsageError(`unknown flag ${raw}${s ? `; did you mean --${s}?` : ''} (consensus-lens ${command} --help lists them)`);
}

/**
 * Parses `argv` for `command` strictly: `--flag value`, `--flag=value`, `-h`, `--` ending the
 * flags; an unknown flag, a flag of another command, a missing value, or a flag given twice is a
 * UsageError. `--help`/`-h` is reported as the flag `help`.
 */
export function parseCommand(command: Command, argv: readonly string[]): ParsedArgs {
  const known = optionsOf(command);
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const [name, def] of known) options[name] = { type: def.type };
  options.help.short = 'h';
  // First pass, not strict: find unknown flags by name before any value is taken, so a misspelled
  // flag before PATH is reported as such (not PATH taken as its value and stdin read instead).
  const { tokens } = nodeParseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  for (const t of tokens!) {
    if (t.kind !== 'option') continue;
    if (!known.has(t.name) && t.name !== 'h') throw unknownFlag(command, t.rawName, t.name, known);
  }
  let parsed: ReturnType<typeof nodeParseArgs>;
  try {
    parsed = nodeParseArgs({ args: [...argv], options, strict: true, allowPositionals: true, tokens: true });
  } catch (e) {
    const msg = errorMessage(e);
    const m = /'(--?[\w-]+)/.exec(msg);
    const code = errnoCode(e);
    if (m && (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' || /argument missing|ambiguous/.test(msg))) {
      const def = known.get(m[1].replace(/^-+/, ''));
      if (def?.type === 'boolean') throw new UsageError(`${m[1]} takes no value`);
      throw new UsageError(`${m[1]} needs a value${def?.value ? ` (${m[1]} ${def.value})` : ''}`);
    }
    throw new UsageError(msg.split('\n')[0]);
  }
  const flags = new Map<string, string | true>();
  for (const t of parsed.tokens!) {
    if (t.kind !== 'option') continue;
    if (flags.has(t.name) && t.name !== 'help') throw new UsageError(`--${t.name} is given twice`);
    const def = known.get(t.name)!;
    if (def.type === 'boolean') {
      if (t.inlineValue) throw new UsageError(`--${t.name} takes no value`);
      flags.set(t.name, true);
    } else flags.set(t.name, t.value!);
  }
  return { command, positionals: parsed.positionals, flags };
}

export function flagString(a: ParsedArgs, name: string): string | undefined {
  const v = a.flags.get(name);
  if (v === true) throw new UsageError(`--${name} needs a value`);
  return v;
}

export const flagBool = (a: ParsedArgs, name: string): boolean => a.flags.get(name) === true;

/** A decimal number (`0.3`, `-1`, `1e-6`): never hexadecimal, binary, octal, `Infinity` or blank. */
export function parseDecimal(text: string, flag: string): number {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new UsageError(`--${flag}: "${text}" is not a decimal number`);
  return Number(text);
}

/** A decimal integer in [min, max]. */
export function parseInteger(text: string | undefined, flag: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[+-]?\d+$/.test(text)) throw new UsageError(`--${flag} must be a whole decimal number${max < Number.MAX_SAFE_INTEGER ? ` from ${min} to ${max}` : ` ≥ ${min}`}, got "${text}"`);
  const n = Number(text);
  if (n < min || n > max) throw new UsageError(`--${flag} must be ${max < Number.MAX_SAFE_INTEGER ? `from ${min} to ${max}` : `≥ ${min}`}, got ${n}`);
  return n;
}

/** Operator parameters given as single values (score, report, health, watch, serve). */
export function paramsFromFlags(a: ParsedArgs): Partial<Params> {
  const out: Record<string, unknown> = {};
  for (const spec of PARAM_SPECS) {
    const v = flagString(a, spec.flag);
    if (v === undefined) continue;
    const x = parseDecimal(v, spec.flag);
    try {
      out[spec.id] = checkValue(spec, x);
    } catch (e) {
      throw new UsageError(errorMessage(e));
    }
  }
  const scale = flagString(a, 'adv-scale');
  if (scale !== undefined) {
    if (scale !== 'group' && scale !== 'none') throw new UsageError(`--adv-scale must be "group" or "none", got "${scale}"`);
    out.advScale = scale;
  }
  return out as Partial<Params>;
}

export function operatorsFromFlags(a: ParsedArgs): OperatorId[] | undefined {
  const v = flagString(a, 'operators');
  if (v === undefined) return undefined;
  try {
    return parseOperatorList(v);
  } catch (e) {
    throw new UsageError(`--operators: ${errorMessage(e)}`);
  }
}

/** `--configured-operator OP` (undefined: each group's logged operator, else majority). */
export function configuredFromFlags(a: ParsedArgs): OperatorId | undefined {
  const v = flagString(a, 'configured-operator');
  if (v === undefined) return undefined;
  if (!(OPERATOR_IDS as readonly string[]).includes(v)) {
    const s = suggest(v, OPERATOR_IDS);
    throw new UsageError(`--configured-operator: unknown operator "${v}"${s ? `; did you mean ${s}?` : ''} (known: ${OPERATOR_IDS.join(', ')})`);
  }
  return v as OperatorId;
}

/** A sweep list: `a,b,c` or `start:stop:step` (stop included when the steps land on it). */
export function parseList(text: string, flag: string): number[] {
  const range = text.split(':');
  if (range.length === 3) {
    const [a, b, s] = range.map((x) => parseDecimal(x.trim(), flag));
    if (s <= 0 || b < a) throw new UsageError(`--${flag} ${text}: expected start:stop:step with step > 0 and stop ≥ start`);
    const count = Math.floor((b - a) / s + 1e-9);
    if (count > 10000) throw new UsageError(`--${flag} ${text}: more than 10000 values`);
    // Computed from the index, rounded to 12 digits, so 0:1:0.1 gives 0.3, not 0.30000000000000004.
    return Array.from({ length: count + 1 }, (_, k) => Number((a + k * s).toPrecision(12)));
  }
  const parts = text.split(',').map((s) => s.trim());
  if (!parts.length || parts.some((p) => p === '')) throw new UsageError(`--${flag} ${text}: expected a,b,c or start:stop:step`);
  return parts.map((p) => parseDecimal(p, flag));
}

/** `--ground-truth auto|use|ignore`: what to do with logged ground truth (docs/contract.md#ground-truth). */
export function groundTruthFromFlags(a: ParsedArgs): 'auto' | 'use' | 'ignore' {
  const v = flagString(a, 'ground-truth') ?? 'auto';
  if (v !== 'auto' && v !== 'use' && v !== 'ignore') throw new UsageError(`--ground-truth must be "auto", "use" or "ignore", got "${v}"`);
  return v;
}

const range = (s: ParamSpec): string => `${s.minExclusive ? '(' : '['}${formatNumber(s.min)}, ${formatNumber(s.max)}]${s.integer ? ', integer' : ''}`;

/** A parameter's default as the help prints it. */
function paramDefault(s: ParamSpec): string {
  const v = DEFAULT_PARAMS[s.id];
  if (v === null && s.defaultsTo) return `= --${PARAM_SPECS.find((p) => p.id === s.defaultsTo)!.flag}`;
  return formatNumber(v as number);
}

/** A number as the help prints it: 1e-6, not 0.000001. */
export const formatNumber = (v: number): string => (v !== 0 && Math.abs(v) < 1e-3 ? v.toExponential() : String(v));

/** `consensus-lens COMMAND --help`: every flag the command takes, with its default and range. */
export function commandHelp(command: Command): string {
  const def = COMMAND_DEFS[command];
  const rows: [string, string][] = [];
  for (const [name, o] of Object.entries(OPTIONS)) {
    if (!o.commands.includes(command)) continue;
    const d = typeof o.default === 'function' ? o.default(command) : o.default;
    rows.push([`--${name}${name === 'help' ? ', -h' : ''}${o.type === 'string' ? ` ${o.value ?? 'X'}` : ''}`, `${o.help}${d ? ` (default: ${d})` : ''}`]);
  }
  const params: [string, string][] = [];
  if (PARAM_COMMANDS.includes(command)) {
    for (const s of PARAM_SPECS) params.push([`--${s.flag} ${command === 'sweep' ? 'LIST' : s.symbol}`, `${s.description} Default ${paramDefault(s)}, range ${range(s)}.`]);
  }
  const width = Math.max(...[...rows, ...params].map((r) => r[0].length)) + 2;
  const fmt = (r: [string, string]) => `  ${r[0].padEnd(width)}${r[1]}`;
  const out = [`usage: consensus-lens ${def.usage}`, '', def.summary, '', 'options:', ...rows.map(fmt)];
  if (params.length) out.push('', command === 'sweep' ? 'operator parameters (each a list a,b,c or start:stop:step; the settings are their product):' : 'operator parameters:', ...params.map(fmt));
  out.push('', EXIT_CODES_HELP);
  return out.join('\n') + '\n';
}

export const EXIT_CODES_HELP = `exit codes: 0 everything read and scored; 1 an error (nothing to score, a group not scored, a file not read); 2 a usage error; 3 input lines skipped (--allow-skipped: 0); 130 interrupted (watch)`;
