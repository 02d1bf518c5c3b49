// Read-only roll-out documents: `consensus-lens-rollout:` URIs served by a content provider. The
// text is the model's output, read back from the log file by byte range; a metadata header comes
// first, and the extracted answer is highlighted with a decoration.
import * as vscode from 'vscode';
import { readRolloutText, type RolloutSource } from '../../logs/log-layer';
import type { QuestionKey, QuestionView } from '../../protocol/messages';
import { answerSpan, rolloutHeader } from '../format';
import { errorMessage } from '../../util/errors';
import type { TokenConfidence } from '../tokens/token-decorations';

export const ROLLOUT_SCHEME = 'consensus-lens-rollout';
/** A language of our own so that word wrap is on for roll-out documents (configurationDefaults). */
export const ROLLOUT_LANGUAGE = 'consensus-lens-rollout';

export interface RolloutRef {
  key: QuestionKey;
  index: number;
  params?: Record<string, number>;
}

export function rolloutUri(ref: RolloutRef, runLabel: string): vscode.Uri {
  const safe = (s: string): string => s.replace(/[\\/?#%]+/g, '_');
  const path = `/${safe(runLabel)}/step ${ref.key.step}/${safe(ref.key.questionId)}/roll-out ${ref.index}.txt`;
  return vscode.Uri.from({ scheme: ROLLOUT_SCHEME, path, query: JSON.stringify(ref) });
}

export function parseRolloutUri(uri: vscode.Uri): RolloutRef | undefined {
  try {
    const r = JSON.parse(uri.query) as RolloutRef;
    if (r?.key && typeof r.key.runId === 'string' && typeof r.key.step === 'number' && typeof r.key.questionId === 'string' && Number.isInteger(r.index)) return r;
  } catch {
    /* not ours */
  }
  return undefined;
}

export interface RolloutHost {
  view(key: QuestionKey, params?: Record<string, number>): Promise<QuestionView | undefined>;
  source(key: QuestionKey, index: number): RolloutSource | undefined;
  preview(key: QuestionKey, index: number): string;
}

/**
 * The one editor column roll-outs open in (README, "In VS Code"):
 *   1. the column that already holds a roll-out tab, shown or hidden behind another tab (no new
 *      column per click, and none for a roll-out tab out of sight);
 *   2. else, when the active column shows one of this extension's panels (the consensus panel, the
 *      dashboard, a run view: the panel that asked), the column beside it, so the panel stays in view;
 *   3. else the active column — with no editor open, the first and only one (never a second column
 *      beside an empty first).
 */
export function rolloutColumn(): vscode.ViewColumn {
  for (const g of vscode.window.tabGroups.all) {
    if (g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.scheme === ROLLOUT_SCHEME)) return g.viewColumn;
  }
  const active = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  const ours = (active instanceof vscode.TabInputWebview && /(^|-)consensusLens\./.test(active.viewType)) || (active instanceof vscode.TabInputCustom && active.viewType.startsWith('consensusLens.'));
  return ours ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active;
}

export class RolloutDocuments implements vscode.TextDocumentContentProvider, vscode.DocumentLinkProvider, vscode.Disposable {
  private readonly spans = new Map<string, [number, number]>();
  private readonly decoration = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
    borderColor: new vscode.ThemeColor('editor.findMatchBorder'),
    borderStyle: 'solid',
    borderWidth: '1px',
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.findMatchForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Center,
  });
  private readonly disposables: vscode.Disposable[] = [];
  /** Editors already decorated: a decoration lasts as long as its editor. */
  private readonly decorated = new WeakSet<vscode.TextEditor>();

  constructor(
    private readonly host: RolloutHost,
    private readonly tokens?: TokenConfidence,
  ) {
    this.disposables.push(
      // Only editors that just became visible: re-decorating the others on every change raced
      // with their closing (View: Close All Editors fires this event while it closes editor after
      // editor), and the workbench rejected the call for an editor already gone ("Illegal
      // argument: TextEditor(…)" in the extension host log).
      vscode.window.onDidChangeVisibleTextEditors((eds) => eds.forEach((e) => this.decorated.has(e) || this.decorate(e))),
      this.decoration,
    );
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const ref = parseRolloutUri(uri);
    if (!ref) return 'Not a Consensus Lens roll-out.';
    const view = await this.host.view(ref.key, ref.params);
    if (!view || ref.index >= view.n) return `This roll-out is no longer in the run (${ref.key.questionId}, step ${ref.key.step}, roll-out ${ref.index}).`;
    const src = this.host.source(ref.key, ref.index);
    let text: string;
    try {
      text = src ? await readRolloutText(src) : this.host.preview(ref.key, ref.index);
    } catch (e) {
      text = `(the text could not be read back from the log: ${errorMessage(e)})`;
    }
    const span = answerSpan(text, view.rollouts[ref.index].answer);
    const lines = rolloutHeader(view, ref.index, src?.file ?? null, src?.line ?? null);
    if (this.tokens) {
      // The token readout goes above the header's closing rule: the answer's own tokens are
      // inside its box.
      const inner: [number, number] | null = span && (text.startsWith('\\boxed{', span[0]) || text.startsWith('\\fbox{', span[0])) ? [text.indexOf('{', span[0]) + 1, span[1] - 1] : span;
      const extra = await this.tokens.readout(uri, src, text, inner);
      const at = lines.length - 1;
      lines.splice(at, 0, ...extra);
      this.tokens.place(uri, at, lines.length);
    }
    const header = lines.join('\n') + '\n';
    if (span) this.spans.set(uri.toString(), [header.length + span[0], header.length + span[1]]);
    else this.spans.delete(uri.toString());
    return header + text;
  }

  decorate(editor: vscode.TextEditor): void {
    if (editor.document.uri.scheme !== ROLLOUT_SCHEME) return;
    this.decorated.add(editor);
    this.tokens?.decorate(editor);
    const span = this.spans.get(editor.document.uri.toString());
    if (!span) return editor.setDecorations(this.decoration, []);
    const range = new vscode.Range(editor.document.positionAt(span[0]), editor.document.positionAt(span[1]));
    editor.setDecorations(this.decoration, [{ range, hoverMessage: 'The extracted answer' }]);
  }

  async open(ref: RolloutRef, runLabel: string, preserveFocus = false): Promise<vscode.TextEditor> {
    const uri = rolloutUri(ref, runLabel);
    let doc = await vscode.workspace.openTextDocument(uri);
    if (doc.languageId !== ROLLOUT_LANGUAGE) doc = await vscode.languages.setTextDocumentLanguage(doc, ROLLOUT_LANGUAGE);
    const column = rolloutColumn();
    const editor = await vscode.window.showTextDocument(doc, { preview: true, viewColumn: column, preserveFocus });
    this.decorate(editor);
    const span = this.spans.get(uri.toString());
    if (span) editor.revealRange(new vscode.Range(doc.positionAt(span[0]), doc.positionAt(span[1])), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    return editor;
  }

  /** The "# log: FILE:LINE" header line links to "reveal in log file". */
  provideDocumentLinks(doc: vscode.TextDocument): vscode.DocumentLink[] {
    const ref = parseRolloutUri(doc.uri);
    if (!ref) return [];
    for (let l = 0; l < Math.min(doc.lineCount, 12); l++) {
      const text = doc.lineAt(l).text;
      // The header ends at its rule; what follows is model output, never a link.
      if (text.startsWith('# ─')) break;
      if (!text.startsWith('# log: ')) continue;
      const args = encodeURIComponent(JSON.stringify([ref.key, ref.index]));
      const link = new vscode.DocumentLink(new vscode.Range(l, 7, l, text.length), vscode.Uri.parse(`command:consensusLens.revealInLog?${args}`));
      link.tooltip = 'Reveal in log file';
      return [link];
    }
    return [];
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
