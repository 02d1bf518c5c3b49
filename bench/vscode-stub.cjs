// A stand-in for the 'vscode' module, enough for `activate` to run outside VS Code (bench only:
// bench/activation-bench.mjs times loading and activating the built bundle). Registrations return
// disposables, events accept listeners and never fire, settings return their defaults, the
// workspace has no folders. Whatever else is touched is a permissive object (no-op functions), so
// the figure is the extension's own work, not VS Code's.
'use strict';
const Module = require('node:module');
const { join } = require('node:path');

const handler = {
  get(t, p) {
    if (p === 'then') return undefined; // never a thenable
    if (p === Symbol.iterator) return function* () {};
    if (p === Symbol.toPrimitive) return () => '';
    if (p === 'prototype') return t.prototype;
    if (!(p in t.own)) t.own[p] = any();
    return t.own[p];
  },
  set(t, p, v) {
    t.own[p] = v;
    return true;
  },
  apply: () => any(),
  construct: () => any(),
};
function any() {
  const f = function () {};
  f.own = {};
  return new Proxy(f, handler);
}
const disposable = () => ({ dispose() {} });
const event = () => () => disposable();
class Uri {
  constructor(fsPath) {
    this.fsPath = fsPath;
    this.path = fsPath;
    this.scheme = 'file';
  }
  static file(p) {
    return new Uri(p);
  }
  static joinPath(u, ...parts) {
    return new Uri(join(u.fsPath, ...parts));
  }
  static parse(s) {
    return new Uri(s.replace(/^file:\/\//, ''));
  }
  static from(o) {
    return new Uri(o.path ?? '');
  }
  toString() {
    return `file://${this.fsPath}`;
  }
  with() {
    return this;
  }
}
class EventEmitter {
  event = event();
  fire() {}
  dispose() {}
}
class Disposable {
  static from() {
    return disposable();
  }
  constructor(f) {
    this.dispose = f ?? (() => {});
  }
}
const config = () => ({ get: (_k, d) => d, inspect: () => undefined, has: () => false, update: async () => {} });

const namespace = (own) => new Proxy(own, { get: (t, p) => (p in t ? t[p] : typeof p === 'string' && p.startsWith('onDid') ? event() : any()) });
// A bundle copies the module's own properties at load (esbuild's CommonJS interop), so every name
// the extension uses is an own property here: the enums (member name as value), the classes
// (permissive constructors) and the namespaces.
const ENUMS = ['StatusBarAlignment', 'TreeItemCollapsibleState', 'ViewColumn', 'ProgressLocation', 'TextEditorRevealType', 'TaskScope', 'TaskRevealKind', 'TaskPanelKind', 'OverviewRulerLane', 'ConfigurationTarget', 'ExtensionMode', 'UIKind', 'DecorationRangeBehavior'];
const CLASSES = ['TreeItem', 'ThemeIcon', 'ThemeColor', 'MarkdownString', 'Range', 'Position', 'Selection', 'Hover', 'DocumentLink', 'Task', 'CustomExecution', 'ShellExecution', 'ProcessExecution', 'Location', 'TabInputCustom', 'TabInputText', 'TabInputWebview', 'CancellationTokenSource', 'RelativePattern'];
const vscode = {
  Uri,
  EventEmitter,
  Disposable,
  workspace: namespace({ workspaceFolders: undefined, isTrusted: true, getConfiguration: config, findFiles: async () => [], textDocuments: [] }),
  window: namespace({ visibleTextEditors: [], terminals: [], activeTextEditor: undefined, tabGroups: { all: [] } }),
  commands: { registerCommand: disposable, executeCommand: async () => undefined, registerTextEditorCommand: disposable },
  languages: namespace({}),
  tasks: namespace({}),
  extensions: namespace({}),
  env: { remoteName: undefined, shell: '/bin/sh', language: 'en', uiKind: 1 },
  version: '1.100.0',
};
for (const e of ENUMS) vscode[e] = new Proxy({}, { get: (_t, q) => (typeof q === 'string' ? q : undefined) });
for (const c of CLASSES) vscode[c] = any();

// `require('vscode')` from the bundle resolves here.
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === 'vscode' ? __filename : resolve.call(this, request, ...rest);
};
module.exports = vscode;
