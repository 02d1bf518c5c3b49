// What `activate` returns: the extension's API for in-host tests (and other extensions), typed.
import type { RunStore } from './model/run-store';
import type { WhatIfController } from './whatif/whatif-controller';
import type { DashboardPanel } from './dashboard/dashboard-panel';

export interface ConsensusLensApi {
  readonly store: RunStore;
  readonly whatIf: WhatIfController;
  /** The open run dashboard (its last model), if any. */
  dashboard(): DashboardPanel | undefined;
}
