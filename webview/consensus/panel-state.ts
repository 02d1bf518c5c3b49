// The consensus panel's state (browser): what the panel shows and the channel to the host. The
// components read it; main.ts writes it as messages arrive.
import { Latest } from '../../src/protocol/channel';
import type { PanelState, ParamSpec, QuestionKey, QuestionView, TokenCurve, WebviewMessage } from '../../src/protocol/messages';

const vscode = acquireVsCodeApi<PanelState>();
export const post = (m: WebviewMessage): void => vscode.postMessage(m);
export const restoredState = (): PanelState | undefined => vscode.getState();

export const panel = {
  specs: [] as ParamSpec[],
  view: null as QuestionView | null,
  /** The roll-out selected in the table and the graph (-1: none). */
  selected: -1,
  /** The sliders' values (restored from the webview state, then the view's). */
  sliderValues: {} as Record<string, number>,
  /** The token curves of the question shown (they arrive after its view; a re-score keeps them). */
  curves: null as { key: QuestionKey; rows: Map<number, TokenCurve>; note: string | null } | null,
};

/** The ids of this panel's slider requests and of the view it shows (src/protocol/channel.ts). */
export const requests = new Latest();
export const shown = new Latest();

export const sameKey = (a: QuestionKey, b: QuestionKey): boolean => a.runId === b.runId && a.step === b.step && a.questionId === b.questionId;

export function saveState(): void {
  vscode.setState({ key: panel.view?.key ?? null, params: Object.keys(panel.sliderValues).length ? { ...panel.sliderValues } : null });
}
