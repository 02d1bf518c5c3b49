// The engine's public surface: every consumer (CLI, extension host, worker threads, reward
// worker, the log readers) goes through these names; the webviews and the protocol through the
// browser-safe part, `browser.ts`, which this file re-exports. Nothing outside src/engine imports
// a file behind them (test/habits.test.ts; the engine's own tests and benchmarks may).
export * from './browser';
export type { Group, Rollout, RecordSource, Verification, OutcomeCheck, Framework } from './types';
export { prepareGroup, groupAnswers, reasoningCosines, checkGroupSize, GroupTooLargeError, DEFAULT_MAX_GROUP_SIZE, type GroupAnswers, type PreparedGroup, type PrepareOptions } from './prepare';
export { engineParams, defaultParams, changedParams } from './flat-params';
export { preview, PREVIEW_CHARS } from './preview';
export { ADV_SCALES, DEFAULT_PARAMS, PARAM_SPECS, paramSpec, resolveParams, checkValue, shiftOf, ciscTempOf, type Params, type ParamSpec, type NumericParam } from './params';
export { OPERATORS, OPERATOR_IDS, configuredOperatorOf, operatorSpec, operatorsUsing, parseOperatorList, needsReasoning, createRunContext, RunContext, type OperatorSpec } from './operators/registry';
export type { OperatorResult } from './operators/result';
export { OPERATOR_LABELS, OPERATOR_FAMILIES, OPERATOR_FAMILY_IDS, isOperatorId, type OperatorId, type OperatorFamily } from './operators/ids';
export { scoreGroup, runOperator, scoreToJson, resultToJson, type GroupScore, type ScoreRequest, type RewardMismatch } from './score';
export { grpoAdvantages, frameworkAdvantages, rewardMismatches, ADVANTAGE_FORMULAS, type AdvantageFormula } from './grpo';
export { classAffinity } from './operators/equilibrium';
export { outcomeReplay, type OutcomeReplay } from './operators/msttrl';
export { fnv1a } from '../util/hash';
export { isCorrect, correctnessOf, truthClassOf, truthForms, type TruthOf } from './truth';
export { theoryReadout, regimeOf, classCoherence, type TheoryReadout, type Regime } from './theory';
export { extractAnswer, answersEqual, explainEquality, formClasses, type AnswerClass, type AnswerClasses } from './answers/answers';
export { ngramsWasmAvailable } from './features/tfidf';
export { replicatorWasmAvailable } from './dynamics/replicator';
export { rng } from './analysis/health-random';
export {
  analyseRun,
  analyseRuns,
  dropPseudoLabelTruth,
  pseudoLabelEvidence,
  type GroundTruthMode,
  type PseudoLabelEvidence,
  FLAG,
  FLAG_NAMES,
  groupHealth,
  isDegenerate,
  labelFreeCopies,
  premiseCheck,
  rolloutWhatIf,
  stripTruth,
  WHATIF_OPERATORS,
} from './analysis/run-health';
export { COMPARE_SERIES, compareRuns, runSummary, trainingRecords, type RunSide } from './analysis/runs-compare';
export {
  addAgreement,
  addGroup,
  agreementRates,
  csvField,
  diffGroup,
  diffsToCsv,
  diffsToJsonl,
  emptyAgreement,
  emptyComparison,
  mergeAgreement,
  mergeComparison,
  runAccuracy,
  stepSummaries,
  type AgreementMatrix,
  type ComparisonStats,
  type GroupDiff,
  type LabelRow,
  type StepSummary,
} from './analysis/setting-compare';
export { sensitivity, type SensitivityInterval } from './analysis/sensitivity';
