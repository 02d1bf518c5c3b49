// The engine's public surface: every consumer (CLI, extension host, worker threads, reward
// worker) goes through these names.
export type { Group, Rollout, RecordSource, Verification, OutcomeCheck, Framework } from './types';
export { prepareGroup, groupAnswers, reasoningCosines, checkGroupSize, GroupTooLargeError, DEFAULT_MAX_GROUP_SIZE, type GroupAnswers, type PreparedGroup, type PrepareOptions } from './prepare';
export { ADV_SCALES, DEFAULT_PARAMS, PARAM_SPECS, paramSpec, resolveParams, checkValue, shiftOf, ciscTempOf, type Params, type ParamSpec, type NumericParam } from './params';
export { OPERATORS, OPERATOR_IDS, configuredOperatorOf, operatorSpec, operatorsUsing, parseOperatorList, needsReasoning, createRunContext, RunContext, type OperatorSpec } from './operators/registry';
export type { OperatorResult } from './operators/result';
export { OPERATOR_LABELS, isOperatorId, type OperatorId } from './operators/ids';
export { scoreGroup, runOperator, scoreToJson, resultToJson, type GroupScore, type ScoreRequest, type RewardMismatch } from './score';
export { grpoAdvantages, frameworkAdvantages, rewardMismatches, ADVANTAGE_FORMULAS, type AdvantageFormula } from './analysis/grpo';
export { classAffinity } from './operators/equilibrium';
export { fnv1a } from './hash';
export { theoryReadout, regimeOf, classCoherence, type TheoryReadout, type Regime } from './analysis/theory';
export { extractAnswer, answersEqual, explainEquality, formClasses, type AnswerClass, type AnswerClasses } from './answers';
