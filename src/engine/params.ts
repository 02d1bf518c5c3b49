// Operator parameters: one table of ids, CLI flags, defaults and ranges (docs/contract.md#parameters-and-defaults), shared by
// the CLI, the extension's settings and sliders, and the reward worker.

export interface Params {
  /** κ: affinity floor between agreeing roll-outs (CoRE eq. 1). */
  kappa: number;
  /** τ: confidence temperature (CoRE §3.2). */
  tau: number;
  /** α: self-competition on the diagonal (Lemma 3). */
  alpha: number;
  /** C: the constant shift of Lemma 1; null means C = α. */
  shift: number | null;
  /** ε: replicator stopping threshold. */
  eps: number;
  /** T_max: replicator iteration cap. */
  tmax: number;
  /** ω: T3RL's weight of a verified roll-out. */
  omega: number;
  /** CISC temperature T; null means T = τ (CISC is then "CoRE without the graph"). */
  ciscTemp: number | null;
  /** λ: MS-TTRL's IPS interpolation (1: no scaling, 0: full inverse-probability scaling). */
  lambda: number;
  /** MS-TTRL thresholds: Wrong below τ_low, Correct at or above τ_high. */
  tauLow: number;
  tauHigh: number;
  /** MS-TTRL: pass rate assumed for an outcome with no check yet. */
  uncheckedPassRate: number;
  /** RENT's token window: the reward is −(mean entropy of the last k response tokens); 0: every token (docs/contract.md#token-entropy). */
  entropyWindow: number;
  /** GRPO view (docs/contract.md#grpo-view): A_i = (R_i − mean)/(std + advEps), or R_i − mean with advScale "none". */
  advEps: number;
  advScale: 'group' | 'none';
}

export const DEFAULT_PARAMS: Readonly<Params> = Object.freeze({
  kappa: 0.1,
  tau: 0.25,
  alpha: 0.1,
  shift: null,
  eps: 1e-6,
  tmax: 200,
  omega: 5,
  ciscTemp: null,
  lambda: 0.9,
  tauLow: 0.5,
  tauHigh: 0.75,
  uncheckedPassRate: 0.5,
  entropyWindow: 0,
  advEps: 1e-6,
  advScale: 'group',
});

export type NumericParam = Exclude<keyof Params, 'advScale'>;

/** The GRPO view's scaling: by the group's standard deviation (GRPO) or none (Dr. GRPO). */
export const ADV_SCALES: readonly Params['advScale'][] = ['group', 'none'];

export interface ParamSpec {
  id: NumericParam;
  /** CLI flag (docs/contract.md#command-line) and the extension's setting name. */
  flag: string;
  symbol: string;
  description: string;
  min: number;
  max: number;
  /** Exclusive lower bound (τ and temperatures must be > 0). */
  minExclusive?: boolean;
  integer?: boolean;
  /** The default is another parameter's value (C = α, T = τ). */
  defaultsTo?: NumericParam;
}

export const PARAM_SPECS: readonly ParamSpec[] = [
  { id: 'kappa', flag: 'kappa', symbol: 'κ', description: 'Affinity floor between roll-outs with the same answer (κ = 1: answer agreement only, Prop. 1).', min: 0, max: 1 },
  { id: 'tau', flag: 'tau', symbol: 'τ', description: 'Confidence temperature: w_i = exp((c_i − max c)/τ).', min: 0, max: 1e6, minExclusive: true },
  { id: 'alpha', flag: 'alpha', symbol: 'α', description: 'Self-competition on the diagonal; α > 0 excludes singleton consensus (Lemma 3).', min: 0, max: 10 },
  { id: 'shift', flag: 'shift', symbol: 'C', description: 'Constant shift C·eeᵀ of Lemma 1 (C ≥ α); defaults to α.', min: 0, max: 100, defaultsTo: 'alpha' },
  { id: 'eps', flag: 'eps', symbol: 'ε', description: 'Replicator dynamics stop when ‖x(t+1) − x(t)‖₂ < ε.', min: 0, max: 1, minExclusive: true },
  { id: 'tmax', flag: 'tmax', symbol: 'T_max', description: 'Replicator dynamics iteration cap.', min: 1, max: 100000, integer: true },
  { id: 'omega', flag: 'omega', symbol: 'ω', description: 'T3RL: vote weight of a tool-verified roll-out.', min: 1, max: 1000 },
  { id: 'ciscTemp', flag: 'cisc-temp', symbol: 'T', description: 'CISC temperature; defaults to τ.', min: 0, max: 1e6, minExclusive: true, defaultsTo: 'tau' },
  { id: 'lambda', flag: 'lambda', symbol: 'λ', description: 'MS-TTRL IPS interpolation: R = (1/f)^(1−λ) for Correct outcomes.', min: 0, max: 1 },
  { id: 'tauLow', flag: 'tau-low', symbol: 'τ_low', description: 'MS-TTRL: an outcome is Wrong when its pass rate is below τ_low.', min: 0, max: 1 },
  { id: 'tauHigh', flag: 'tau-high', symbol: 'τ_high', description: 'MS-TTRL: an outcome is Correct when its pass rate is at least τ_high.', min: 0, max: 1 },
  { id: 'uncheckedPassRate', flag: 'unchecked-pass-rate', symbol: 'p₀', description: 'MS-TTRL: pass rate of an outcome not checked yet.', min: 0, max: 1 },
  { id: 'entropyWindow', flag: 'entropy-window', symbol: 'k', description: 'Token entropy (RENT): mean over the last k response tokens; 0 = every token.', min: 0, max: 1000000, integer: true },
  { id: 'advEps', flag: 'adv-eps', symbol: 'ε_A', description: 'GRPO advantage epsilon (verl 1e-6, TRL 1e-4).', min: 0, max: 1 },
];

export function paramSpec(id: string): ParamSpec | undefined {
  return PARAM_SPECS.find((p) => p.id === id || p.flag === id);
}

/** Merges overrides onto the defaults and validates every value against its range. */
export function resolveParams(overrides: Partial<Params> = {}): Params {
  const p: Params = { ...DEFAULT_PARAMS };
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) continue;
    if (k === 'advScale') {
      if (!ADV_SCALES.includes(v as Params['advScale'])) throw new RangeError(`advScale must be "group" or "none", got ${JSON.stringify(v)}`);
      p.advScale = v as Params['advScale'];
      continue;
    }
    const spec = paramSpec(k);
    if (!spec) throw new RangeError(`unknown parameter "${k}"`);
    if (v === null && spec.defaultsTo) {
      (p as unknown as Record<string, unknown>)[spec.id] = null;
      continue;
    }
    (p as unknown as Record<string, number>)[spec.id] = checkValue(spec, v);
  }
  if (p.shift !== null && p.shift < p.alpha) throw new RangeError(`shift C = ${p.shift} must be at least α = ${p.alpha} (Lemma 1)`);
  if (p.tauLow > p.tauHigh) throw new RangeError(`tau-low ${p.tauLow} must not exceed tau-high ${p.tauHigh}`);
  return p;
}

export function checkValue(spec: ParamSpec, v: unknown): number {
  const x = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof x !== 'number' || !Number.isFinite(x)) throw new RangeError(`${spec.flag} must be a number, got ${JSON.stringify(v)}`);
  const low = spec.minExclusive ? x <= spec.min : x < spec.min;
  if (low || x > spec.max) throw new RangeError(`${spec.flag} = ${x} is outside ${spec.minExclusive ? '(' : '['}${spec.min}, ${spec.max}]`);
  if (spec.integer && !Number.isInteger(x)) throw new RangeError(`${spec.flag} must be an integer, got ${x}`);
  return x;
}

export const shiftOf = (p: Params): number => (p.shift === null ? p.alpha : p.shift);
export const ciscTempOf = (p: Params): number => (p.ciscTemp === null ? p.tau : p.ciscTemp);
