// consensusLens.showHostLag: waits for the background work on followed runs, then reports the
// host's event-loop delay since the last call (and resets it) — how the e2e suite checks that the
// host stays responsive.
import * as vscode from 'vscode';
import type { RunStore } from '../model/run-store';
import { LagMonitor } from './lag';

export function registerHostLag(store: RunStore, log: vscode.LogOutputChannel): vscode.Disposable {
  const lag = new LagMonitor();
  const command = vscode.commands.registerCommand('consensusLens.showHostLag', async () => {
    await store.summariesDone();
    const r = lag.read();
    lag.reset();
    const summarised = [...store.runs.values()].reduce((n, run) => n + run.summaries.size, 0);
    log.info(`extension host event-loop lag: max ${r.maxMs} ms, mean ${r.meanMs} ms over ${r.seconds} s; ${summarised} questions summarised`);
    return { ...r, summarised };
  });
  return vscode.Disposable.from(lag, command);
}
