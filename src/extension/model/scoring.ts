// Builds what the panel and the explorer show from the engine's results. Pure: no 'vscode', no
// DOM. The engine computes every number; this module only arranges them (and never builds HTML).
import {
  OPERATOR_IDS,
  classAffinity,
  correctnessOf,
  classCoherence,
  configuredOperatorOf,
  createRunContext,
  prepareGroup,
  resolveParams,
  scoreGroup,
  type Group,
  type GroupScore,
  type OperatorId,
  type PreparedGroup,
  type OutcomeReplay,
  type RunContext,
  FLAG,
  FLAG_NAMES,
  groupHealth,
  isDegenerate,
  engineParams,
  preview,
  type AurocCounts,
  type GroupHealth,
} from '../../engine';
import type { ClassRow, GraphEdge, OperatorOutcome, QuestionKey, QuestionView, Regime, RolloutRow } from '../../protocol/messages';

/** A group as the store keeps it: prepared features, no response texts. */
export interface StoredGroup {
  key: QuestionKey;
  runLabel: string;
  prepared: PreparedGroup;
  prompt: string | null;
  /** Short previews of the responses (for tables and tooltips; the full text is read from disk). */
  previews: string[];
  sampleIdx: (number | null)[];
  /** Every accepted form of the logged ground truth when the log gives several (verl `gts` lists):
   * a label equal to any is correct (docs/contract.md#ground-truth). */
  groundTruthForms?: readonly string[];
}

/** What the explorer shows for a question (scored with the configured parameters). */
export interface QuestionSummary {
  regime: Regime;
  overturn: boolean;
  gate: number;
  mismatches: number;
  label: string | null;
  majorityLabel: string | null;
  n: number;
  /**
   * Run health of the question (docs/health.md): the record the run's timeline and alarms are built
   * from. Absent from a summary restored from a saved index (`healthSaved`): the record stays on
   * disk with its group and is read back when the run's health is analysed again (RunStore).
   */
  health?: GroupHealth;
  /** The record is in the saved index (a light summary: see `lightSummary`). */
  healthSaved?: true;
  /** What the explorer shows and filters on from the health record, kept in every summary. */
  digest: HealthDigest;
  /** The configured operator the logged rewards were checked against (the user's, or the group's logged one). */
  checkedAgainst?: OperatorId;
}

/** The explorer's part of a question's health record (light: every summary keeps it). */
export interface HealthDigest {
  /** A degenerate plurality, or any empty, truncated or repetition-collapsed roll-out (docs/health.md §1). */
  degenerate: boolean;
  /** The vote's class is mostly degenerate roll-outs. */
  plurality: boolean;
  /** Operators that pick another class than a degenerate vote's. */
  rescuedBy: OperatorId[];
  /** The confidence premise's counts for the vote's class (the run's premise check pools them). */
  auroc?: AurocCounts;
}

export function healthDigest(h: GroupHealth): HealthDigest {
  const d: HealthDigest = { degenerate: h.degeneratePlurality || h.flags.some(isDegenerate), plurality: h.degeneratePlurality, rescuedBy: h.rescuedBy };
  if (h.auroc.label) d.auroc = h.auroc.label;
  return d;
}

/** A summary without its health record (saved with its group; read back when needed): what a second open holds per question. */
export function lightSummary(s: QuestionSummary): QuestionSummary {
  const { health: _h, ...rest } = s;
  return { ...rest, healthSaved: true };
}

/** What a stored group keeps of its group besides the features (an index entry has it without its texts). */
export interface StoredHead {
  step: number;
  questionId: string;
  prompt?: string;
  groundTruthForms?: readonly string[];
  sampleIdx: (number | null)[];
}

/** A stored group from its head and its features and previews (computed on a worker thread, or by `storeGroup`). */
export function storedGroup(head: StoredHead, runId: string, runLabel: string, done: { prepared: PreparedGroup; previews: string[] }): StoredGroup {
  return {
    key: { runId, step: head.step, questionId: head.questionId },
    runLabel,
    prepared: done.prepared,
    prompt: head.prompt ?? null,
    previews: done.previews,
    sampleIdx: head.sampleIdx,
    ...(head.groundTruthForms?.length ? { groundTruthForms: head.groundTruthForms } : {}),
  };
}

/** A stored group from a group with its texts (tests, benchmarks): prepared here, with the run-health text measures. */
export function storeGroup(group: Group, runId: string, runLabel: string): StoredGroup {
  const head = { ...group, sampleIdx: group.rollouts.map((r) => (typeof r.sampleIdx === 'number' ? r.sampleIdx : null)) };
  return storedGroup(head, runId, runLabel, { prepared: prepareGroup(group, { health: true }), previews: group.rollouts.map((r) => preview(r.response ?? '')) });
}

export function score(g: StoredGroup, params: Record<string, number>, configured: OperatorId | undefined, ctx?: RunContext, operators?: readonly OperatorId[]): GroupScore {
  return scoreGroup(g.prepared, { params: engineParams(params), configuredOperator: configured, operators }, ctx);
}

/**
 * The run context a question's MS-TTRL sees when it is scored alone (the panel, a pair): its
 * outcome cache as the question's earlier groups left it, their outcome checks replayed in run
 * order (docs/contract.md#ms-ttrl). `history`: RunStore.outcomeHistory. Other operators read no
 * context.
 */
export function outcomeContext(history: readonly OutcomeReplay[], params: Record<string, number>): RunContext {
  const ctx = createRunContext();
  const p = resolveParams(engineParams(params));
  for (const g of history) ctx.replayOutcomes(p, g);
  return ctx;
}

/** `ctx`: the context `s` was scored with (a logged MS-TTRL's rewards are checked against it). */
export function summarize(g: StoredGroup, s: GroupScore, ctx?: RunContext): QuestionSummary {
  const core = s.results.core;
  const health = groupHealth(g.prepared, s, { configuredOperator: s.rewardMismatch?.operator, ctx });
  return {
    regime: g.prepared.n === 0 ? 'empty' : s.analysis.regime,
    overturn: s.analysis.overturn === true,
    gate: core ? core.gate : 1,
    mismatches: s.rewardMismatch?.indices.length ?? 0,
    ...(s.rewardMismatch ? { checkedAgainst: s.rewardMismatch.operator } : {}),
    label: core?.label ?? null,
    majorityLabel: s.results.majority?.label ?? null,
    n: g.prepared.n,
    health,
    digest: healthDigest(health),
  };
}

const finite = (x: number | undefined | null): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);

/** Above this many within-class edges, each node keeps only its strongest ones: the graph stays legible and a question switch renders fast (a class of 59 has 1,711 pairs). */
export const MAX_EDGES = 250;
export const EDGES_PER_NODE = 3;

export function graphEdges(g: PreparedGroup, kappa: number): GraphEdge[] {
  const all: GraphEdge[] = [];
  g.classes.forEach((c, k) => {
    const m = c.members.length;
    if (m < 2) return;
    const a = classAffinity(g.cosines[k], m, kappa);
    for (let p = 0; p < m; p++) for (let q = p + 1; q < m; q++) all.push({ source: c.members[p], target: c.members[q], weight: a[p * m + q] });
  });
  if (all.length <= MAX_EDGES) return all;
  const byNode = new Map<number, GraphEdge[]>();
  for (const e of all) {
    for (const v of [e.source, e.target]) {
      let l = byNode.get(v);
      if (!l) byNode.set(v, (l = []));
      l.push(e);
    }
  }
  const keep = new Set<GraphEdge>();
  for (const l of byNode.values()) {
    l.sort((x, y) => y.weight - x.weight);
    for (const e of l.slice(0, EDGES_PER_NODE)) keep.add(e);
  }
  return all.filter((e) => keep.has(e));
}

export function buildView(g: StoredGroup, params: Record<string, number>, configured: OperatorId | undefined, ctx?: RunContext): QuestionView {
  const t0 = performance.now();
  const s = score(g, params, configured, ctx);
  const scoreMs = performance.now() - t0;
  const p = g.prepared;
  const core = s.results.core;
  const eq = core?.mass ? core : s.results.ec;
  const mismatchSet = new Set(s.rewardMismatch?.indices ?? []);
  const gt = p.groundTruth;
  // The engine's one rule for "is this label correct" (every accepted form of the ground truth).
  const correct = correctnessOf({ groundTruth: gt, groundTruthForms: g.groundTruthForms });
  const matchesGt = (a: string | null): boolean | null => (correct ? correct(a) : null);

  const operators: OperatorOutcome[] = OPERATOR_IDS.map((op) => {
    const r = s.results[op];
    if (!r) return { operator: op, available: false, note: s.unavailable[op] ?? 'not run', label: null, gate: 0, labelClass: -1, flipsMajority: false, correct: null };
    const vote = s.results.majority;
    return {
      operator: op,
      available: true,
      // An approximation of the paper's value says so wherever the operator is shown (docs/contract.md#label-free-operators).
      note: r.confidence === 'missing' ? 'confidence missing: ran as EC' : r.approximation ? `approximation: ${r.approximation}` : undefined,
      label: r.label,
      gate: r.gate,
      labelClass: r.labelClass,
      flipsMajority: !!vote && r.labelClass >= 0 && vote.labelClass >= 0 && r.labelClass !== vote.labelClass,
      correct: r.labelClass >= 0 ? matchesGt(r.label) : null,
    };
  });

  const health = groupHealth(p, s, { configuredOperator: configured, ctx });
  const support = new Set(eq?.support ?? []);
  const confWeights = core?.confidence === 'used' ? core.weights : undefined;
  const rollouts: RolloutRow[] = [];
  for (let i = 0; i < p.n; i++) {
    const rewards: Partial<Record<OperatorId, number>> = {};
    const advantages: Partial<Record<OperatorId, number>> = {};
    for (const op of OPERATOR_IDS) {
      const r = s.results[op];
      if (!r) continue;
      rewards[op] = r.rewards[i];
      advantages[op] = r.advantages[i];
    }
    rollouts.push({
      index: i,
      sampleIdx: g.sampleIdx[i] ?? null,
      answer: p.answers[i],
      classIndex: p.classOf[i],
      confidence: p.hasConfidence[i] ? p.confidence[i] : null,
      weight: confWeights ? finite(confWeights[i]) : null,
      mass: eq?.mass ? finite(eq.mass[i]) : null,
      inSupport: support.has(i),
      rewards,
      advantages,
      loggedReward: finite(p.loggedRewards[i]),
      ...(p.loggedAdvantages ? { loggedAdvantage: finite(p.loggedAdvantages[i]) } : {}),
      mismatch: mismatchSet.has(i),
      flags: FLAG_NAMES.filter((f) => health.flags[i] & FLAG[f]),
      preview: g.previews[i] ?? '',
      hasSource: !!p.sources[i],
    });
  }

  const kappa = s.params.kappa;
  const classes: ClassRow[] = p.classes.map((c, k) => {
    const m = c.members.length;
    // c_a, the mean within-class off-diagonal affinity (docs/contract.md#theory-read-outs): the engine's.
    const meanAffinity = m > 1 ? (classCoherence(p, k, kappa) ?? 0) : 0;
    let mass = 0;
    if (eq?.mass) for (const i of c.members) mass += eq.mass[i];
    return {
      index: k,
      answer: c.answer,
      size: m,
      mass,
      meanAffinity,
      labelOf: operators.filter((o) => o.available && o.labelClass === k).map((o) => o.operator),
      matchesGroundTruth: matchesGt(c.answer),
    };
  });

  const a = s.analysis;
  const recovery =
    a.plurality && a.runnerUp
      ? {
          m: a.plurality.size,
          cw: a.plurality.coherence ?? 0,
          wbarW: a.plurality.confidence,
          nStar: a.runnerUp.size,
          cStar: a.runnerUp.coherence ?? 0,
          wbarStar: a.runnerUp.confidence,
          threshold: finite(a.threshold),
          margin: finite(a.margin),
        }
      : null;

  return {
    key: g.key,
    runLabel: g.runLabel,
    n: p.n,
    prompt: g.prompt,
    groundTruth: gt ?? null,
    ...(g.groundTruthForms && g.groundTruthForms.length > 1 ? { groundTruthForms: [...g.groundTruthForms] } : {}),
    configuredOperator: configuredOperatorOf(p, configured),
    health: {
      degeneratePlurality: health.degeneratePlurality,
      rescuedBy: health.rescuedBy,
      auroc: health.auroc.label ? health.auroc.label.u / health.auroc.label.pairs : null,
      runAuroc: null,
      runVerdict: null,
      runMessage: null,
    },
    params: { ...params },
    regime: p.n === 0 ? 'empty' : a.regime,
    overturn: a.overturn === true,
    gate: core?.gate ?? 1,
    iterations: eq?.iterations ?? null,
    confidence: p.confidenceMissing === 0 && p.n > 0 ? 'present' : 'missing',
    recovery,
    operators,
    rollouts,
    classes,
    edges: graphEdges(p, kappa),
    mismatches: s.rewardMismatch?.indices.length ?? 0,
    scoreMs,
  };
}
