// The webviews' HTML shell (consensus panel, run dashboard, run view; written by webview-panel.ts). It holds no log content (the data arrives by postMessage and
// is rendered as text): only URIs of our own bundles and a fresh nonce. Pure: no 'vscode'.
import { randomBytes } from 'node:crypto';
import { escapeHtml } from '../util/html';

export function makeNonce(): string {
  return randomBytes(18)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '');
}

export interface ShellOptions {
  cspSource: string;
  scriptUri: string;
  styleUri: string;
  nonce: string;
  /** Defaults to "Consensus" (the consensus panel). */
  title?: string;
  /** The consensus panel's graph: cytoscape injects this stylesheet, allowed by the nonce. */
  cytoscape?: boolean;
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return ["default-src 'none'", `img-src ${cspSource} data:`, `style-src ${cspSource} 'nonce-${nonce}'`, `font-src ${cspSource}`, `script-src 'nonce-${nonce}'`].join('; ');
}

export function panelHtml(o: ShellOptions): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(contentSecurityPolicy(o.cspSource, o.nonce))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(o.styleUri)}">${
    o.cytoscape === false
      ? ''
      : `
<style id="__________cytoscape_stylesheet" nonce="${escapeHtml(o.nonce)}">.__________cytoscape_container { position: relative; }</style>`
  }
<title>${escapeHtml(o.title ?? 'Consensus')}</title>
</head>
<body>
<div id="app" data-state="loading"><p class="muted">Loading…</p></div>
<script nonce="${escapeHtml(o.nonce)}" src="${escapeHtml(o.scriptUri)}"></script>
</body>
</html>`;
}
