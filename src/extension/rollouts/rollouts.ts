// Roll-outs as documents: opening one (read-only, answer highlighted), revealing its record in the
// log file, and the two commands. A roll-out's text is read back from its log on demand.
import { rolloutSourceOf } from '../../logs/log-layer';
import { safeText } from '../../logs/safe-text';
import { show } from '../format';
import * as vscode from 'vscode';
import { isQuestionKey, type QuestionKey } from '../../protocol/messages';
import type { RunStore } from '../model/run-store';
import { buildView, outcomeContext } from '../model/scoring';
import { configuredOperator, configuredParams } from '../settings';
import type { Node } from '../explorer/tree';
import { RolloutDocuments, ROLLOUT_SCHEME, parseRolloutUri } from './documents';
import type { TokenConfidence } from '../tokens/token-decorations';

export interface RolloutHooks {
  /** Shown after a roll-out opens (the consensus panel selects its row). */
  opened(index: number): void;
  /** The question the consensus panel shows, or one the user picks. */
  currentQuestion(): Promise<QuestionKey | undefined>;
}

/** A roll-out named by a command's arguments: an explorer row, or (question key, index). */
function rolloutArg(arg?: QuestionKey | Node, index?: number): { key: QuestionKey; index: number } | undefined {
  if (arg && typeof arg === 'object' && 'kind' in arg && arg.kind === 'rollout') return { key: arg.key, index: arg.index };
  if (isQuestionKey(arg) && Number.isInteger(index)) return { key: arg, index: index! };
  return undefined;
}

export class Rollouts implements vscode.Disposable {
  private readonly docs: RolloutDocuments;
  private last: { key: QuestionKey; index: number } | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly store: RunStore,
    private readonly hooks: RolloutHooks,
    tokens?: TokenConfidence,
  ) {
    this.docs = new RolloutDocuments(
      {
        view: async (key, params) => {
          const g = await store.get(key);
          if (!g) return undefined;
          const p = params ?? configuredParams();
          return buildView(g, p, configuredOperator(), outcomeContext(await store.outcomeHistory(key), p));
        },
        source: (key, index) => {
          const e = store.entry(key);
          return e && rolloutSourceOf(e, index);
        },
        preview: (key, index) => store.cached(key)?.previews[index] ?? '',
      },
      tokens,
    );
    this.disposables.push(
      this.docs,
      vscode.workspace.registerTextDocumentContentProvider(ROLLOUT_SCHEME, this.docs),
      vscode.languages.registerDocumentLinkProvider({ scheme: ROLLOUT_SCHEME }, this.docs),
      vscode.commands.registerCommand('consensusLens.openRollout', (key?: QuestionKey | Node, index?: number) => this.openCommand(key, index)),
      vscode.commands.registerCommand('consensusLens.revealInLog', (key?: QuestionKey | Node, index?: number) => this.revealCommand(key, index)),
    );
  }

  async open(key: QuestionKey, index: number, params?: Record<string, number>, preserveFocus = false): Promise<void> {
    const run = this.store.runs.get(key.runId);
    if (!run || !this.store.entry(key)) return void vscode.window.showWarningMessage(`Consensus Lens: ${key.questionId} is no longer in the run.`);
    await this.docs.open({ key, index, params }, run.label, preserveFocus);
    this.last = { key, index };
    this.hooks.opened(index);
  }

  async reveal(key: QuestionKey, index: number): Promise<void> {
    const entry = this.store.entry(key);
    const src = entry && rolloutSourceOf(entry, index);
    if (!src) return void vscode.window.showWarningMessage('Consensus Lens: this roll-out has no log file location (read from stdin?).');
    const line = Math.max(0, src.line - 1);
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(src.file));
    const end = doc.lineAt(Math.min(line, doc.lineCount - 1)).range.end;
    // Reuse the column already showing this log file, if any (no new group per reveal).
    const column = vscode.window.visibleTextEditors.find((e) => e.document.uri.fsPath === doc.uri.fsPath)?.viewColumn ?? vscode.ViewColumn.Beside;
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(line, 0, end.line, Math.min(end.character, 2000)), preview: true, viewColumn: column });
  }

  private async openCommand(arg?: QuestionKey | Node, index?: number): Promise<void> {
    const r = rolloutArg(arg, index);
    if (r) return this.open(r.key, r.index);
    const q = await this.hooks.currentQuestion();
    if (!q) return;
    const g = await this.store.get(q);
    if (!g) return;
    const pick = await vscode.window.showQuickPick(
      g.prepared.answers.map((a, i) => ({ label: `#${i}  ${a === null ? '(no answer)' : show(a)}`, description: safeText(g.previews[i].slice(0, 80)), index: i })),
      { title: `Roll-outs of ${q.questionId} (step ${q.step})`, matchOnDescription: true },
    );
    if (pick) await this.open(q, pick.index);
  }

  private async revealCommand(arg?: QuestionKey | Node, index?: number): Promise<void> {
    const r = rolloutArg(arg, index);
    if (r) return this.reveal(r.key, r.index);
    const uri = vscode.window.activeTextEditor?.document.uri;
    const ref = uri && uri.scheme === ROLLOUT_SCHEME ? parseRolloutUri(uri) : undefined;
    if (ref) return this.reveal(ref.key, ref.index);
    if (this.last) return this.reveal(this.last.key, this.last.index);
    void vscode.window.showInformationMessage('Consensus Lens: open a roll-out first.');
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
