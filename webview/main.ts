import './main.css';
import type { HostMessage, PanelState } from '../src/protocol/messages';

const vscode = acquireVsCodeApi<PanelState>();
const app = document.getElementById('app')!;
window.addEventListener('message', (e: MessageEvent<HostMessage>) => {
  const m = e.data;
  if (m.type === 'empty') {
    app.dataset.state = 'empty';
    app.textContent = m.message;
  }
});
vscode.postMessage({ type: 'ready', state: vscode.getState() ?? null });
