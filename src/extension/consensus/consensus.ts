// The consensus panel as a feature: what the panel asks the host for (views scored on the host's
// prepared groups, the sliders, roll-outs, sensitivity from the what-if workers), its restore after
// a reload, live refresh while the run grows, and consensusLens.showConsensus.
import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import { OPERATOR_IDS } from '../../engine';
import { isQuestionKey, type PanelState, type QuestionKey, type QuestionView } from '../../protocol/messages';
import { questionKeyString, type RunStore } from '../model/run-store';
import { buildView, outcomeContext } from '../model/scoring';
import type { OutcomeReplay } from '../../engine';
import { SLIDER_PARAMS } from '../slider-params';
import { affectsScores, configuredOperator, configuredParams } from '../settings';
import { runPremise } from '../status/health-status';
import { mayFollowAgain } from '../runs/restore';
import type { Node } from '../explorer/tree';
import type { SensitivityRange, TokenCurve } from '../../protocol/messages';
import { readTokenCurves } from '../tokens/curves';
import { configuredDecoder } from '../tokens/token-decorations';
import { ConsensusPanel, PANEL_VIEW_TYPE, type PanelHost } from './consensus-panel';

const STATE_KEY = 'consensusLens.panel';

export interface ConsensusHooks {
  /** Waits until the followed runs are read, following `runId` again first when given (a panel
   * restored for a run that was opened by hand). */
  whenRead(followAgain?: string): Promise<void>;
  /** The question selected in the explorer, else undefined. */
  selectedQuestion(): QuestionKey | undefined;
  /** A question the user picks (no argument, no panel). */
  pickQuestion(): Promise<QuestionKey | undefined>;
  openRollout(key: QuestionKey, index: number, params: Record<string, number>): Promise<void>;
  revealInLog(key: QuestionKey, index: number): Promise<void>;
  sensitivity(key: QuestionKey, params: Record<string, number>): Promise<SensitivityRange[] | null>;
  /** After the panel shows another question. */
  shown(): void;
  log(message: string): void;
}

const panelKey = (key: QuestionKey): string => `${key.runId}\u0000${questionKeyString(key.step, key.questionId)}`;

export class ConsensusFeature implements vscode.Disposable {
  private readonly host: PanelHost;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly store: RunStore,
    private readonly hooks: ConsensusHooks,
  ) {
    this.host = {
      paramSpecs: () => {
        const c = configuredParams();
        return SLIDER_PARAMS.map((p) => ({ ...p, default: c[p.key] ?? p.default }));
      },
      operators: () => [...OPERATOR_IDS],
      defaultParams: configuredParams,
      view: (key, params) => this.view(key, params),
      openRollout: hooks.openRollout,
      revealInLog: hooks.revealInLog,
      firstQuestion: () => hooks.selectedQuestion() ?? store.firstQuestion(),
      log: hooks.log,
      remember: (state) => void context.workspaceState.update(STATE_KEY, state),
      remembered: () => context.workspaceState.get<PanelState>(STATE_KEY),
      sensitivity: hooks.sensitivity,
      tokenCurves: (key) => this.tokenCurves(key),
    };
    this.disposables.push(
      { dispose: () => ConsensusPanel.instance?.dispose() },
      vscode.window.registerWebviewPanelSerializer(PANEL_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel, state) => {
          ConsensusPanel.revive(panel, context.extensionUri, this.host, state);
        },
      }),
      store.onChange((e) => {
        const panel = ConsensusPanel.instance;
        if (!panel) return;
        const q = panel.question;
        // A panel opened before any run was read shows the first question once one arrives.
        if (!q) {
          const first = store.firstQuestion();
          if (first) panel.showQuestion(first);
        }
        if (e.kind === 'run' && e.changed.length && q && q.runId === e.runId) {
          const run = store.runs.get(e.runId);
          const k = run && store.groupKey(run, q.step, q.questionId);
          if (k && e.changed.includes(k)) panel.refresh();
        }
      }),
      vscode.workspace.onDidChangeConfiguration((e) => affectsScores(e) && ConsensusPanel.instance?.refresh()),
      vscode.commands.registerCommand('consensusLens.showConsensus', async (arg?: QuestionKey | Node) => {
        let key = isQuestionKey(arg) ? arg : arg && typeof arg === 'object' && 'kind' in arg && (arg.kind === 'question' || arg.kind === 'rollout') ? arg.key : undefined;
        if (!key && !ConsensusPanel.instance?.question) key = await hooks.pickQuestion();
        this.show(key);
      }),
    );
  }

  get panel(): ConsensusPanel | undefined {
    return ConsensusPanel.instance;
  }

  /** Opens (or reveals) the panel on this question, else on the one it shows or the first. */
  show(key: QuestionKey | undefined): void {
    ConsensusPanel.show(this.context.extensionUri, this.host, key);
    this.hooks.shown();
  }

  /** Shows this question unless the open panel already does (no panel: nothing). */
  follow(key: QuestionKey): void {
    const q = ConsensusPanel.instance?.question;
    if (ConsensusPanel.instance && !(q && q.runId === key.runId && q.step === key.step && q.questionId === key.questionId)) this.show(key);
  }

  /** The run's confidence premise (pooled within-question AUROC), shown next to the τ slider. */
  private withRunPremise(v: QuestionView): QuestionView {
    const run = this.store.runs.get(v.key.runId);
    if (run && v.health) {
      const p = runPremise(run.summaries.values());
      v.health.runAuroc = p.auroc;
      v.health.runVerdict = p.verdict;
      v.health.runMessage = p.message;
    }
    return v;
  }

  /**
   * What the earlier groups of the question on show feed MS-TTRL's cache (RunStore.outcomeHistory),
   * as of a run version: a slider move re-scores without reading them again.
   */
  private history?: { key: string; version: number; groups: OutcomeReplay[] };

  private historyOf(key: QuestionKey): OutcomeReplay[] | undefined {
    const h = this.history;
    return h && h.key === panelKey(key) && h.version === this.store.runs.get(key.runId)?.version ? h.groups : undefined;
  }

  private view(key: QuestionKey, params: Record<string, number>): QuestionView | Promise<QuestionView> {
    // Re-scoring a question already prepared stays synchronous (the slider path).
    const cached = this.store.cached(key);
    const known = this.historyOf(key);
    if (cached && known) return this.withRunPremise(buildView(cached, params, configuredOperator(), outcomeContext(known, params)));
    return (async () => {
      let g = await this.store.get(key);
      if (!g) {
        // A panel restored after a reload can ask before its run is read, or for a run that was
        // opened by hand (not in the settings): follow it again and wait for it — only when it
        // is the run of the host's own record, never a path named by the webview (restore.ts).
        await this.hooks.whenRead(!this.store.runs.has(key.runId) && mayFollowAgain(key.runId, this.context.workspaceState.get(STATE_KEY)) && existsSync(key.runId) ? key.runId : undefined);
        g = await this.store.get(key);
      }
      if (!g) throw new Error(`${key.questionId} (step ${key.step}) is not in the open runs`);
      // MS-TTRL sees the outcome cache the question's earlier groups left (docs/contract.md#ms-ttrl)
      const version = this.store.runs.get(key.runId)?.version ?? -1;
      const groups = await this.store.outcomeHistory(key);
      this.history = { key: panelKey(key), version, groups };
      return this.withRunPremise(buildView(g, params, configuredOperator(), outcomeContext(groups, params)));
    })();
  }

  /** The roll-outs' token log-probs by position, read back from their records (../tokens/curves.ts). */
  private async tokenCurves(key: QuestionKey): Promise<{ rows: TokenCurve[]; note: string | null } | null> {
    const e = this.store.entry(key);
    return e ? readTokenCurves(e, (await configuredDecoder()).decode) : null;
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
