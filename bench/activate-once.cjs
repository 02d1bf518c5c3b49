// One activation of a built extension bundle outside VS Code (bench/activation-bench.mjs runs
// this in a fresh process per sample): prints the wall and CPU milliseconds (user + system) of the
// bundle's require (parse, compile, module bodies) and of `activate(context)` until it returns. CPU
// time is the figure to compare on a loaded machine: waiting for a core is not counted.
'use strict';
const t0 = performance.now();
require('./vscode-stub.cjs');
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, dirname } = require('node:path');
const bundle = process.argv[2];
const storage = mkdtempSync(join(tmpdir(), 'cl-activate-'));
const vscode = require('vscode');
const context = {
  subscriptions: [],
  extensionUri: vscode.Uri.file(dirname(dirname(bundle))),
  extensionPath: dirname(dirname(bundle)),
  globalStorageUri: vscode.Uri.file(storage),
  storageUri: vscode.Uri.file(storage),
  logUri: vscode.Uri.file(storage),
  globalState: { get: (_k, d) => d, update: async () => {}, keys: () => [], setKeysForSync() {} },
  workspaceState: { get: (_k, d) => d, update: async () => {}, keys: () => [] },
  asAbsolutePath: (p) => join(dirname(dirname(bundle)), p),
  extensionMode: 1,
};
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const t1 = performance.now();
const c1 = cpu();
const ext = require(bundle);
const t2 = performance.now();
const c2 = cpu();
ext.activate(context);
const t3 = performance.now();
const c3 = cpu();
for (const d of context.subscriptions) d?.dispose?.();
require('node:fs').rmSync(storage, { recursive: true, force: true });
process.stdout.write(JSON.stringify({ stub: t1 - t0, load: t2 - t1, activate: t3 - t2, loadCpu: c2 - c1, activateCpu: c3 - c2 }) + '\n');
process.exit(0);
