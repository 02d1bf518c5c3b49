// The consensus panel: one webview, driven by typed messages (src/protocol). The host scores; the
// webview renders. Survives reloads through a WebviewPanelSerializer and the webview's setState.
import * as vscode from 'vscode';
import {
  PROTOCOL_VERSION,
  parseWebviewMessage,
  isQuestionKey,
  type HostMessage,
  type OperatorId,
  type ParamSpec,
  type PanelState,
  type QuestionKey,
  type QuestionView,
  type SensitivityRange,
  type TokenCurve,
} from '../../protocol/messages';
import { Latest } from '../../protocol/channel';
import { errorMessage } from '../../util/errors';
import { WebviewPanelBase } from '../webview-panel';

export const PANEL_VIEW_TYPE = 'consensusLens.consensus';

/** What the panel needs from the rest of the extension. */
export interface PanelHost {
  paramSpecs(): ParamSpec[];
  operators(): OperatorId[];
  defaultParams(): Record<string, number>;
  /** Scores the question (reading and preparing it first when needed); throws when it is unknown. */
  view(key: QuestionKey, params: Record<string, number>): QuestionView | Promise<QuestionView>;
  openRollout(key: QuestionKey, index: number, params: Record<string, number>): Promise<void>;
  revealInLog(key: QuestionKey, index: number): Promise<void>;
  /** A question to show when the panel opens without one. */
  firstQuestion(): QuestionKey | undefined;
  /** The host's own record of what the panel shows (workspace state), restored after a reload. */
  remember?(state: PanelState): void;
  remembered?(): PanelState | undefined;
  log(message: string): void;
  /** The question's CoRE label intervals in κ and τ at these parameters (computed off the host thread). */
  sensitivity?(key: QuestionKey, params: Record<string, number>): Promise<SensitivityRange[] | null>;
  /** The roll-outs' token log-probs by position, read back from their records. */
  tokenCurves?(key: QuestionKey): Promise<{ rows: TokenCurve[]; note: string | null } | null>;
}

export class ConsensusPanel extends WebviewPanelBase<HostMessage> {
  private static current: ConsensusPanel | undefined;
  private key: QuestionKey | null = null;
  private params: Record<string, number>;
  /** Ids of the views asked for; a view or read-out for an older one is stale (src/protocol/channel.ts). */
  private readonly views = new Latest();
  /** seq → time the view was requested (for the switch-latency figure). */
  private pending = new Map<number, number>();
  readonly renderTimes: number[] = [];

  static get instance(): ConsensusPanel | undefined {
    return ConsensusPanel.current;
  }

  static show(extensionUri: vscode.Uri, host: PanelHost, key: QuestionKey | undefined): ConsensusPanel {
    if (ConsensusPanel.current) {
      if (!ConsensusPanel.current.panel.visible) ConsensusPanel.current.panel.reveal(undefined, true);
    } else {
      const panel = vscode.window.createWebviewPanel(PANEL_VIEW_TYPE, 'Consensus', { viewColumn: vscode.ViewColumn.Active, preserveFocus: true }, ConsensusPanel.options(extensionUri));
      ConsensusPanel.current = new ConsensusPanel(panel, extensionUri, host, null);
    }
    const p = ConsensusPanel.current;
    const k = key ?? p.key ?? host.firstQuestion();
    if (k) p.showQuestion(k);
    else if (!p.key) p.post({ type: 'empty', message: 'No run is open. Use "Consensus Lens: Open Run…" or add a folder to the setting consensusLens.runs.' });
    return p;
  }

  static revive(panel: vscode.WebviewPanel, extensionUri: vscode.Uri, host: PanelHost, state: unknown): ConsensusPanel {
    // A panel the user opened after the reload, before VS Code got round to restoring the old
    // one, wins: the restored panel would show an older question.
    if (ConsensusPanel.current) {
      panel.dispose();
      return ConsensusPanel.current;
    }
    panel.webview.options = ConsensusPanel.options(extensionUri);
    // The host's record is written on every switch; the webview's state can lag behind it.
    const mine = host.remembered?.();
    const s = (mine && isQuestionKey(mine.key) ? mine : state) as Partial<PanelState> | undefined;
    ConsensusPanel.current = new ConsensusPanel(panel, extensionUri, host, s && isQuestionKey(s.key) ? { key: s.key, params: s.params ?? null } : null);
    return ConsensusPanel.current;
  }

  private static options(extensionUri: vscode.Uri): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return { ...WebviewPanelBase.webviewOptions(extensionUri, ['media']), retainContextWhenHidden: false, enableFindWidget: true };
  }

  private constructor(
    panel: vscode.WebviewPanel,
    extensionUri: vscode.Uri,
    private readonly host: PanelHost,
    restored: { key: QuestionKey; params: Record<string, number> | null } | null,
  ) {
    super(panel, extensionUri, { bundle: 'main', cytoscape: true });
    this.params = { ...host.defaultParams(), ...(restored?.params ?? {}) };
    this.key = restored?.key ?? null;
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'activity.svg');
    this.disposables.push({ dispose: () => this.sensitivityTimer && clearTimeout(this.sensitivityTimer) });
    this.render();
  }

  get question(): QuestionKey | null {
    return this.key;
  }

  /** The what-if parameters the panel shows (launching training prefills them). */
  get parameters(): Record<string, number> {
    return { ...this.params };
  }

  showQuestion(key: QuestionKey): void {
    this.key = key;
    this.panel.title = `Consensus · ${key.questionId}`;
    this.switchStarted = { at: performance.now(), wall: Date.now(), key };
    this.host.remember?.({ key, params: this.params });
    this.sendView('open');
  }
  /** When the last question switch was asked for (host clock), to log the time until rendered. */
  private switchStarted: { at: number; wall: number; key: QuestionKey } | null = null;
  private openSeqs = new Set<number>();

  /** Re-score after the run changed (live updates). */
  refresh(): void {
    if (this.key) this.sendView('update');
  }

  select(index: number): void {
    this.post({ type: 'select', index });
  }

  private sendView(reason: 'open' | 'rescore' | 'update', request?: number): void {
    if (!this.key) return;
    const seq = this.views.issue();
    const key = this.key;
    const fail = (e: unknown): void => this.post({ type: 'error', seq, message: errorMessage(e) });
    try {
      const v = this.host.view(key, this.params);
      const deliver = (view: QuestionView): void => {
        // A slower, older request must not overwrite a newer question or setting.
        if (!this.views.current(seq)) return;
        this.pending.set(seq, Date.now());
        if (reason === 'open') this.openSeqs.add(seq);
        this.post({ type: 'view', seq, request, view, reason });
        this.scheduleSensitivity(key, seq);
        // The curves depend on the records, not the sliders: read when the question opens or grows.
        if (reason !== 'rescore') this.sendTokenCurves(key);
      };
      if (v instanceof Promise) v.then(deliver, fail);
      else deliver(v);
    } catch (e) {
      fail(e);
    }
  }

  /** After the view, once the user rests on a question (or its sliders) for 600 ms: the κ/τ
   * intervals of the label. Not sooner: the search re-runs CoRE a few hundred times in a
   * worker, and clicking through questions must not wait behind it on two cores. */
  private sensitivityTimer: NodeJS.Timeout | undefined;
  private scheduleSensitivity(key: QuestionKey, seq: number): void {
    const search = this.host.sensitivity;
    if (!search) return;
    if (this.sensitivityTimer) clearTimeout(this.sensitivityTimer);
    this.sensitivityTimer = setTimeout(() => {
      if (!this.views.current(seq)) return;
      const params = { ...this.params };
      search(key, params).then(
        (ranges) => {
          // The read-out of view `seq`: dropped when another view was asked for since.
          if (ranges && this.views.current(seq)) this.post({ type: 'sensitivity', seq, params, ranges });
        },
        (e) => this.host.log(`sensitivity of ${key.questionId}: ${errorMessage(e)}`),
      );
    }, 600);
  }

  private sendTokenCurves(key: QuestionKey): void {
    this.host.tokenCurves?.(key).then(
      (r) => {
        // Dropped when the panel moved to another question since (a slider's re-score keeps them).
        const k = this.key;
        if (r && k && k.runId === key.runId && k.step === key.step && k.questionId === key.questionId) this.post({ type: 'tokenCurves', key, rows: r.rows, note: r.note });
      },
      (e) => this.host.log(`token log-probs of ${key.questionId}: ${errorMessage(e)}`),
    );
  }

  /** While the webview loads, keep the latest view only: older ones would be redrawn for nothing. */
  protected supersedes(queued: HostMessage, next: HostMessage): boolean {
    const isView = (m: HostMessage): boolean => m.type === 'view' || m.type === 'empty' || m.type === 'error';
    return isView(next) && isView(queued);
  }

  protected onMessage(raw: unknown): void {
    const m = parseWebviewMessage(raw);
    if (!m) {
      this.host.log(`ignored a malformed message from the panel: ${JSON.stringify(raw)?.slice(0, 200)}`);
      return;
    }
    switch (m.type) {
      case 'ready': {
        const queued = this.becomeReady();
        this.send({ type: 'init', protocol: PROTOCOL_VERSION, params: this.host.paramSpecs(), operators: this.host.operators() });
        if (!this.key && m.state?.key && !this.host.remembered?.()) {
          this.key = m.state.key;
          if (m.state.params) this.params = { ...this.host.defaultParams(), ...m.state.params };
        }
        if (this.key && !queued.some((q) => q.type === 'view')) this.sendView('open');
        for (const q of queued) this.send(q);
        if (!this.key && !queued.length) {
          const k = this.host.firstQuestion();
          if (k) this.showQuestion(k);
          else this.post({ type: 'empty', message: 'No run is open. Use "Consensus Lens: Open Run…" or add a folder to the setting consensusLens.runs.' });
        }
        return;
      }
      case 'setParams':
        this.params = { ...this.params, ...m.params };
        if (this.key) this.host.remember?.({ key: this.key, params: this.params });
        this.sendView('rescore', m.seq);
        return;
      case 'resetParams':
        this.params = this.host.defaultParams();
        if (this.key) this.host.remember?.({ key: this.key, params: this.params });
        this.sendView('rescore', m.seq);
        return;
      case 'openRollout':
        if (this.key) void this.host.openRollout(this.key, m.index, this.params);
        return;
      case 'revealInLog':
        if (this.key) void this.host.revealInLog(this.key, m.index);
        return;
      case 'rendered': {
        const t = this.pending.get(m.seq);
        this.pending.delete(m.seq);
        if (t !== undefined) {
          this.renderTimes.push(m.ms);
          if (this.renderTimes.length > 200) this.renderTimes.shift();
        }
        if (this.openSeqs.delete(m.seq) && this.switchStarted && this.key === this.switchStarted.key) {
          // Until the view was on screen (the webview's clock), else until its message came back.
          const onScreen = m.at !== undefined ? m.at - this.switchStarted.wall : undefined;
          const roundTrip = performance.now() - this.switchStarted.at;
          const total = onScreen !== undefined && onScreen >= 0 && onScreen <= roundTrip + 5 ? onScreen : roundTrip;
          this.switchStarted = null;
          this.host.log(
            `question switch to ${this.key.questionId} (step ${this.key.step}): ${total.toFixed(1)} ms until rendered (webview ${m.ms.toFixed(1)} ms, message back after ${roundTrip.toFixed(1)} ms)`,
          );
        }
        return;
      }
    }
  }

  protected override onDispose(): void {
    if (ConsensusPanel.current === this) ConsensusPanel.current = undefined;
  }
}
