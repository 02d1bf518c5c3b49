// The API VS Code gives a webview's scripts.
interface VsCodeApi<S> {
  postMessage(message: unknown): void;
  getState(): S | undefined;
  setState(state: S): void;
}
declare function acquireVsCodeApi<S = unknown>(): VsCodeApi<S>;
