// Token confidence in roll-out documents (README "Confidence on the text"): a theme-aware
// background per token by its probability (four decoration types, colours contributed per theme
// in package.json), toggled by *Consensus Lens: Toggle Token Confidence*; a hover with the
// token's log-prob; links from the header's lowest-confidence spans to the text. The numbers
// come from ./confidence.ts; the roll-out documents (../rolloutDocs.ts) call `readout` while
// they build a document and `decorate` when it is shown.
import * as vscode from 'vscode';
import { readFile, stat } from 'node:fs/promises';
import { errorMessage } from '../../util/errors';
import { readRolloutObject, type RolloutSource } from '../../logs/log-layer';
import { tokenizerFile } from '../settings';
import { tokenTexts, type TokenTexts } from './tokenizer';
import { BIN_LABELS, binRanges, tokenAt, tokenDataOf, tokenReadout, quoted, type TokenLayout, type TokenReadout } from './confidence';

export const TOKEN_SCHEME = 'consensus-lens-rollout';
const SETTING = 'consensusLens.tokenConfidence.show';
/** A tokenizer.json larger than this is not read (the largest vocabularies are ~30 MB). */
const MAX_TOKENIZER_BYTES = 64 << 20;
let tokenizer: { key: string; texts: TokenTexts | null; error?: string } | undefined;

/**
 * The decoder of the configured tokenizer file (consensusLens.tokenConfidence.tokenizerFile), read
 * once per version of the file; undefined when unset; an error names the file.
 */
export async function configuredDecoder(): Promise<{ decode?: (ids: readonly number[]) => string[]; error?: string }> {
  const file = tokenizerFile();
  if (!file) return {};
  try {
    const st = await stat(file);
    const key = `${file}\0${st.size}\0${st.mtimeMs}`;
    if (tokenizer?.key !== key) {
      if (st.size > MAX_TOKENIZER_BYTES) throw new Error(`larger than ${MAX_TOKENIZER_BYTES >> 20} MB`);
      tokenizer = { key, texts: null };
      try {
        tokenizer.texts = tokenTexts(JSON.parse(await readFile(file, 'utf8')));
      } catch (e) {
        tokenizer.error = errorMessage(e);
      }
    }
    if (tokenizer.error) throw new Error(tokenizer.error);
    const t = tokenizer.texts!;
    return { decode: (ids) => t.decode(ids) };
  } catch (e) {
    return { error: `the tokenizer file ${file} (consensusLens.tokenConfidence.tokenizerFile) could not be read: ${errorMessage(e)}` };
  }
}
/** Roll-out documents whose token layout is kept. */
const MAX_DOCS = 32;
const COLORS = ['consensusLens.tokenConfidence.p90', 'consensusLens.tokenConfidence.p50', 'consensusLens.tokenConfidence.p20', 'consensusLens.tokenConfidence.p05'];

interface DocState {
  text: string;
  readout: TokenReadout;
  /** Document line where the text starts (after the header). */
  firstLine: number;
  /** Document line of the token readout's first header line. */
  headerLine: number;
  ranges?: Int32Array[];
}

export class TokenConfidence implements vscode.HoverProvider, vscode.DocumentLinkProvider, vscode.Disposable {
  private readonly types = COLORS.map((c, i) =>
    vscode.window.createTextEditorDecorationType({
      backgroundColor: new vscode.ThemeColor(c),
      overviewRulerColor: i >= 2 ? new vscode.ThemeColor(c) : undefined,
      overviewRulerLane: vscode.OverviewRulerLane.Right,
    }),
  );
  private readonly docs = new Map<string, DocState>();

  get enabled(): boolean {
    return vscode.workspace.getConfiguration().get<boolean>(SETTING, true);
  }

  /**
   * The header lines for a roll-out (what its record logs about tokens); remembers the layout for
   * `place` and `decorate`. `answer`: text offsets of the extracted answer.
   */
  async readout(uri: vscode.Uri, source: RolloutSource | undefined, text: string, answer: [number, number] | null): Promise<string[]> {
    let o: Record<string, unknown> | null = null;
    try {
      o = source ? await readRolloutObject(source) : null;
    } catch (e) {
      this.docs.delete(uri.toString());
      return [`# token confidence: the record could not be read back (${errorMessage(e)})`];
    }
    const dec = await configuredDecoder();
    const r = tokenReadout(text, o ? tokenDataOf(o, dec.decode) : { kind: 'none' }, answer);
    if (dec.error) r.lines.push(`# ${dec.error}`);
    const key = uri.toString();
    this.docs.delete(key);
    this.docs.set(key, { text, readout: r, firstLine: 0, headerLine: 0 });
    // Bounded: the layouts of the most recent documents (a document's language change closes and
    // reopens it without asking for its content again, so closing does not forget it).
    while (this.docs.size > MAX_DOCS) this.docs.delete(this.docs.keys().next().value as string);
    return r.lines;
  }

  /** Where the readout's lines and the text landed in the document. */
  place(uri: vscode.Uri, headerLine: number, firstLine: number): void {
    const s = this.docs.get(uri.toString());
    if (s) (s.headerLine = headerLine), (s.firstLine = firstLine), (s.ranges = undefined);
  }

  decorate(editor: vscode.TextEditor): void {
    const s = this.docs.get(editor.document.uri.toString());
    if (!s?.readout.layout || !this.enabled) {
      for (const t of this.types) editor.setDecorations(t, []);
      return;
    }
    s.ranges ??= binRanges(s.text, s.readout.layout, s.firstLine);
    s.ranges.forEach((q, b) => {
      const ranges: vscode.Range[] = new Array(q.length / 4);
      for (let k = 0; k < q.length; k += 4) ranges[k / 4] = new vscode.Range(q[k], q[k + 1], q[k + 2], q[k + 3]);
      editor.setDecorations(this.types[b], ranges);
    });
  }

  provideHover(doc: vscode.TextDocument, pos: vscode.Position): vscode.Hover | undefined {
    const s = this.docs.get(doc.uri.toString());
    const layout: TokenLayout | null | undefined = s?.readout.layout;
    if (!s || !layout || pos.line < s.firstLine) return undefined;
    const base = doc.offsetAt(new vscode.Position(s.firstLine, 0));
    const i = tokenAt(layout, doc.offsetAt(pos) - base);
    if (i < 0) return undefined;
    const lp = layout.logprobs[i];
    const tok = s.text.slice(layout.starts[i], layout.ends[i]);
    const range = new vscode.Range(doc.positionAt(base + layout.starts[i]), doc.positionAt(base + layout.ends[i]));
    // Plain text (never Markdown): the token is model output.
    const md = new vscode.MarkdownString();
    md.appendText(`token ${i + 1} ${quoted(tok)}: ${Number.isFinite(lp) ? `log-prob ${lp.toFixed(3)}, p = ${Math.exp(lp).toPrecision(3)}` : 'no log-prob logged'}`);
    return new vscode.Hover(md, range);
  }

  /** The header's span entries link to the span in the text. */
  provideDocumentLinks(doc: vscode.TextDocument): vscode.DocumentLink[] {
    const s = this.docs.get(doc.uri.toString());
    if (!s?.readout.layout) return [];
    const base = doc.offsetAt(new vscode.Position(s.firstLine, 0));
    return s.readout.spans.map((span, k) => {
      const line = s.headerLine + s.readout.spanLines[k];
      const text = doc.lineAt(Math.min(line, doc.lineCount - 1)).text;
      const m = /^#\s+\d+\./.exec(text);
      const from = doc.positionAt(base + span.start);
      const to = doc.positionAt(base + span.stop);
      const args = encodeURIComponent(JSON.stringify([doc.uri.toString(), from.line, from.character, to.line, to.character]));
      const link = new vscode.DocumentLink(new vscode.Range(line, 0, line, m ? m[0].length : text.length), vscode.Uri.parse(`command:consensusLens.revealTokenSpan?${args}`));
      link.tooltip = 'Go to this span in the text';
      return link;
    });
  }

  forget(uri: vscode.Uri): void {
    this.docs.delete(uri.toString());
  }

  dispose(): void {
    for (const t of this.types) t.dispose();
    this.docs.clear();
  }
}

/** Creates the feature and registers its command, hover, links and setting listener. */
export function registerTokenConfidence(context: vscode.ExtensionContext): TokenConfidence {
  const tc = new TokenConfidence();
  const redecorate = () => vscode.window.visibleTextEditors.filter((e) => e.document.uri.scheme === TOKEN_SCHEME).forEach((e) => tc.decorate(e));
  context.subscriptions.push(
    tc,
    vscode.languages.registerHoverProvider({ scheme: TOKEN_SCHEME }, tc),
    vscode.languages.registerDocumentLinkProvider({ scheme: TOKEN_SCHEME }, tc),
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration(SETTING) && redecorate()),
    vscode.commands.registerCommand('consensusLens.toggleTokenConfidence', async () => {
      await vscode.workspace.getConfiguration().update(SETTING, !tc.enabled, vscode.ConfigurationTarget.Global);
      redecorate();
      vscode.window.setStatusBarMessage(`Consensus Lens: token confidence ${tc.enabled ? `shown (${BIN_LABELS.join(', ')})` : 'hidden'}`, 3000);
    }),
    vscode.commands.registerCommand('consensusLens.revealTokenSpan', async (uri: string, sl: number, sc: number, el: number, ec: number) => {
      const editor = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === uri);
      if (!editor || ![sl, sc, el, ec].every(Number.isInteger)) return;
      const range = new vscode.Range(sl, sc, el, ec);
      editor.selection = new vscode.Selection(range.start, range.end);
      editor.revealRange(range, vscode.TextEditorRevealType.InCenter);
    }),
  );
  return tc;
}
