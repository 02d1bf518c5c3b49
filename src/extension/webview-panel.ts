// The one webview lifecycle of the consensus panel, the run dashboard and the run view: render the
// CSP shell (webview-html.ts: a fresh nonce per render, only our own bundle), hold messages while
// the webview loads (it is not ready until its script says 'ready'; a hidden webview loses its DOM,
// retainContextWhenHidden being off, and says 'ready' again), post directly once ready, and pass
// every message from the webview to the panel's own handler (which validates it first).
import * as vscode from 'vscode';
import { makeNonce, panelHtml } from './webview-html';

export interface WebviewBundle {
  /** The bundle's name in dist/webview: `<bundle>.js` and `<bundle>.css`. */
  bundle: string;
  /** The page title (the shell's default is "Consensus"). */
  title?: string;
  /** The consensus panel's graph: cytoscape's stylesheet allowed by the nonce. */
  cytoscape?: boolean;
}

/** What a panel's host side builds on: subclasses decide what a new message replaces while the
 * webview loads and what to send when it says 'ready'. */
export abstract class WebviewPanelBase<Out extends { type: string }> implements vscode.Disposable {
  protected readonly disposables: vscode.Disposable[] = [];
  private ready = false;
  private queue: Out[] = [];
  protected disposed = false;
  /** False for a panel VS Code owns (a custom editor's): disposing the view leaves it be. */
  protected disposesPanel = true;

  protected constructor(
    readonly panel: vscode.WebviewPanel,
    protected readonly extensionUri: vscode.Uri,
    private readonly shell: WebviewBundle,
  ) {
    this.disposables.push(
      panel.onDidDispose(() => this.dispose()),
      panel.webview.onDidReceiveMessage((m) => this.onMessage(m)),
      panel.onDidChangeViewState(() => {
        if (!panel.visible) this.ready = false;
      }),
    );
  }

  /** Webview options: scripts on, resources from dist/webview (and `extra` roots, e.g. media). */
  static webviewOptions(extensionUri: vscode.Uri, extra: string[] = []): vscode.WebviewOptions {
    return { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview'), ...extra.map((d) => vscode.Uri.joinPath(extensionUri, d))] };
  }

  /** (Re)writes the page: the webview loads again and will say 'ready'. */
  protected render(title?: string): void {
    const webview = this.panel.webview;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview');
    this.ready = false;
    webview.html = panelHtml({
      cspSource: webview.cspSource,
      nonce: makeNonce(),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, `${this.shell.bundle}.js`)).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, `${this.shell.bundle}.css`)).toString(),
      title: title ?? this.shell.title,
      cytoscape: this.shell.cytoscape ?? false,
    });
  }

  /** Whether `next`, posted while the webview loads, makes the queued `queued` pointless. */
  protected abstract supersedes(queued: Out, next: Out): boolean;

  /** The webview's message (unvalidated: the handler parses it). */
  protected abstract onMessage(raw: unknown): void | Promise<void>;

  /** Sends now when the webview is ready, else queues (dropping what `m` supersedes). */
  protected post(m: Out): void {
    if (this.disposed) return;
    if (!this.ready) {
      this.queue = this.queue.filter((q) => !this.supersedes(q, m));
      this.queue.push(m);
      return;
    }
    void this.panel.webview.postMessage(m);
  }

  /** Sends now, ready or not (the first messages of a 'ready' reply). */
  protected send(m: Out): void {
    if (!this.disposed) void this.panel.webview.postMessage(m);
  }

  /** The webview said 'ready': from now on messages go directly; returns what was held, in order. */
  protected becomeReady(): Out[] {
    this.ready = true;
    return this.queue.splice(0);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.onDispose();
    if (this.disposesPanel) this.panel.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  /** The subclass's own clean-up (timers, the static instance), before the panel is disposed. */
  protected onDispose(): void {}
}
