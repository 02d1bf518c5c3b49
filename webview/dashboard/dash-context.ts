// What a dashboard section or chart draws with: the page's state and the chart kit (the shapes
// only: sections.ts lists the sections, charts/ draws them, both import this).
import type { DashModel, DashSweep, DashWebviewMessage, DashWhatIf } from '../../src/protocol/dashboard-messages';
import type { OperatorId } from '../../src/protocol/messages';
import type { ChartKit } from './chart-kit';

/** What the page holds when a section draws (the model is null until the first one arrives). */
export interface DashContext {
  model: DashModel | null;
  sweep: DashSweep | null;
  whatif: DashWhatIf | null;
  operators: OperatorId[];
  /** The operator the run is scored with (the settings'). */
  configured: OperatorId;
  kit: ChartKit;
  post(m: DashWebviewMessage): void;
}

/** A per-step chart, drawn into the steps section's grid (`body`: below the grid). */
export type StepChart = (grid: HTMLElement, ctx: DashContext & { model: DashModel; labels: string[]; body: HTMLElement }) => void;

export interface DashSection {
  id: string;
  title: string;
  note: string;
  /** Draws into `body` when the model arrives (the sweep and re-score sections also on their own messages). */
  render(body: HTMLElement, ctx: DashContext): void;
}
