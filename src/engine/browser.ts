// The part of the engine's public surface a webview bundle may import: the operator list and the
// shapes of what the host sends (types only), plus pure formatting — nothing that needs Node,
// WebAssembly or mathjs. `src/protocol/` and `webview/` import the engine through this file only;
// `index.ts` re-exports it for everything else (test/habits.test.ts holds both rules).
export { OPERATOR_IDS, OPERATOR_LABELS, OPERATOR_FAMILIES, OPERATOR_FAMILY_IDS, isOperatorId, type OperatorId, type OperatorFamily } from './operators/ids';
export type {
  Alarm,
  AurocCounts,
  FlagName,
  GroupHealth,
  LearningSignal,
  OperatorOutcome,
  PremiseCheck,
  PremiseVerdict,
  RewardBug,
  RewardBugKind,
  RewardEvidence,
  RolloutsWhatIf,
  RunHealth,
  Series,
} from './analysis/health-types';
export type { CompareRun, CompareSeriesId, Disagreement, RunsComparison } from './analysis/runs-compare-types';
export { accuracyOf, countAccuracy, emptyAccuracy, formatAccuracy, type AccuracyCount } from './analysis/accuracy';
