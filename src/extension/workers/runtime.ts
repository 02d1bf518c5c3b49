// The worker runtime's entry: what the host (the run model in src/extension/model, the features)
// may use of src/extension/workers. The threads, the shards and their messages stay behind it
// (test/layers.test.ts holds the run model to this file).
export { WhatIfEngine, type DashboardData, type EngineOptions, type Flip, type Hooks, type RunItem, type RunSource, type SweepReport, type WhatIfReport } from './whatif-engine';
export type { DashboardRow, FailedItem, Setting, SweepCell } from './whatif-shard';
export { prepareEntry } from './load-group';
