// Minimal argument parsing for the consensus-lens command: `--flag value`, `--flag=value`,
// boolean flags, and positionals. Operator parameters come from the engine's one table.

import { PARAM_SPECS, checkValue, parseOperatorList, type OperatorId, type Params } from '../engine';

export interface CliIO {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export class UsageError extends Error {}

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | true>;
}

export function parseArgs(argv: readonly string[], booleanFlags: readonly string[] = []): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (let k = 0; k < argv.length; k++) {
    const a = argv[k];
    if (a === '-' || !a.startsWith('--')) {
      positionals.push(a);
      continue;
    }
    if (a === '--') {
      positionals.push(...argv.slice(k + 1));
      break;
    }
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
    if (eq > 0) flags.set(name, a.slice(eq + 1));
    else if (booleanFlags.includes(name)) flags.set(name, true);
    else {
      const v = argv[k + 1];
      if (v === undefined || (v.startsWith('--') && v !== '--')) throw new UsageError(`--${name} needs a value`);
      flags.set(name, v);
      k++;
    }
  }
  return { positionals, flags };
}

export function flagString(a: ParsedArgs, name: string): string | undefined {
  const v = a.flags.get(name);
  if (v === true) throw new UsageError(`--${name} needs a value`);
  return v;
}

/** Operator parameters given as single values (score, watch, serve). */
export function paramsFromFlags(a: ParsedArgs): Partial<Params> {
  const out: Record<string, unknown> = {};
  for (const spec of PARAM_SPECS) {
    const v = flagString(a, spec.flag);
    if (v === undefined) continue;
    try {
      out[spec.id] = checkValue(spec, v);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  }
  const scale = flagString(a, 'adv-scale');
  if (scale !== undefined) {
    if (scale !== 'group' && scale !== 'none') throw new UsageError('--adv-scale must be "group" or "none"');
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
    throw new UsageError((e as Error).message);
  }
}

/** A sweep list: `a,b,c` or `start:stop:step` (stop included when the steps land on it). */
export function parseList(text: string, flag: string): number[] {
  const range = text.split(':');
  if (range.length === 3) {
    const [a, b, s] = range.map(Number);
    if (![a, b, s].every(Number.isFinite) || s <= 0 || b < a) throw new UsageError(`--${flag} ${text}: expected start:stop:step with step > 0 and stop ≥ start`);
    const count = Math.floor((b - a) / s + 1e-9);
    if (count > 10000) throw new UsageError(`--${flag} ${text}: more than 10000 values`);
    // Computed from the index, rounded to 12 digits, so 0:1:0.1 gives 0.3, not 0.30000000000000004.
    return Array.from({ length: count + 1 }, (_, k) => Number((a + k * s).toPrecision(12)));
  }
  const values = text.split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  if (!values.length || !values.every(Number.isFinite)) throw new UsageError(`--${flag} ${text}: expected a,b,c or start:stop:step`);
  return values;
}

/** `--ground-truth auto|ignore` (score, report, sweep, watch): what to do with logged ground truth. */
export function groundTruthFromFlags(a: ParsedArgs): 'auto' | 'ignore' {
  const v = flagString(a, 'ground-truth') ?? 'auto';
  if (v !== 'auto' && v !== 'ignore') throw new UsageError(`--ground-truth must be "auto" or "ignore", got "${v}"`);
  return v;
}
