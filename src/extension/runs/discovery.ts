// Which runs are followed: the setting consensusLens.runs, runs found in the workspace, runs
// opened by hand, and runs that appear while the window is open (a training job started outside
// our launcher creates its log folder). Owns the workspace watcher and the "primary" run (the one
// a command without a run argument means).
import * as vscode from 'vscode';
import { isAbsolute, resolve } from 'node:path';
import { stat } from 'node:fs/promises';
import { unsafeRunRoot } from '../../logs/log-layer';
import type { QuestionKey } from '../../protocol/messages';
import type { RunEntry, RunStore } from '../model/run-store';
import { configuredRuns, scanningWorkspace, workspaceRoot } from '../settings';
import { CANDIDATE_GLOB, MAX_CANDIDATES, inFollowedRun, runFolders } from './discover';

export class RunDiscovery implements vscode.Disposable {
  /** The run commands without a run argument act on: the first followed, then the last picked. */
  primary: string | undefined;
  /** Settles once the configured and discovered runs are added (not read). */
  ready: Promise<void> = Promise.resolve();
  private rescanTimer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly store: RunStore,
    private readonly log: vscode.LogOutputChannel,
  ) {
    // Every creation, not only of log files: a job that makes its folder and then writes into it
    // can be reported as the new folder alone. A new folder, or a log file created or written to,
    // outside the followed runs triggers the scan; anything else costs a prefix check (and a stat).
    const watcher = vscode.workspace.createFileSystemWatcher('**/*', false, false, true);
    const isLog = (p: string): boolean => /\.(jsonl|parquet)$|\.table\.json$/i.test(p);
    watcher.onDidCreate((uri) => {
      const p = uri.fsPath;
      if (!this.mayRescan(p)) return;
      if (isLog(p)) this.scheduleRescan(p);
      else
        void stat(p).then(
          (st) => st.isDirectory() && this.scheduleRescan(p),
          () => undefined,
        );
    });
    watcher.onDidChange((uri) => isLog(uri.fsPath) && this.scheduleRescan(uri.fsPath));
    this.disposables.push(watcher, { dispose: () => this.rescanTimer && clearTimeout(this.rescanTimer) });
  }

  /** Follows a run folder or log file (relative paths: to the first workspace folder). */
  follow(path: string, origin: RunEntry['origin']): RunEntry {
    const run = this.store.add(this.resolve(path), origin);
    this.primary ??= run.id;
    return run;
  }

  /** The first look for runs, at activation. */
  start(): void {
    this.ready = this.followConfigured();
  }

  /** Adds the runs of the settings and, when scanning, those found in the workspace. */
  async followConfigured(): Promise<void> {
    for (const p of configuredRuns()) {
      // a setting can never make the extension walk the whole disk or the home folder
      const unsafe = unsafeRunRoot(this.resolve(p));
      if (unsafe) this.log.warn(`consensusLens.runs: ${unsafe}; not followed`);
      else this.follow(p, 'settings');
    }
    if (scanningWorkspace()) for (const dir of await findWorkspaceRuns()) this.follow(dir, 'workspace');
  }

  /** A path as `follow` reads it (relative: to the first workspace folder). */
  resolvePath(p: string): string {
    return this.resolve(p);
  }

  private resolve(p: string): string {
    return isAbsolute(p) ? p : resolve(workspaceRoot() ?? process.cwd(), p);
  }

  private mayRescan(file: string): boolean {
    return scanningWorkspace() && !this.rescanTimer && !inFollowedRun(file, [...this.store.runs.keys()]);
  }

  /** A log file created outside every followed run triggers one workspace scan, at most one per
   * second (a job writing many files at once costs one scan). Files inside a followed run are its
   * index's business. */
  private scheduleRescan(file: string): void {
    if (!this.mayRescan(file)) return;
    this.rescanTimer = setTimeout(() => {
      this.rescanTimer = undefined;
      const before = this.store.runs.size;
      void this.followConfigured().then(() => this.log.info(`workspace scan after ${file} was created: ${this.store.runs.size - before} new run(s)`));
    }, 1000);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** Folders of the workspace that hold run logs (native, verl or TRL), outermost only (discover.ts). */
async function findWorkspaceRuns(): Promise<string[]> {
  const files = await vscode.workspace.findFiles(CANDIDATE_GLOB, '**/{node_modules,.git,dist}/**', MAX_CANDIDATES);
  return runFolders(
    files.map((f) => f.fsPath),
    (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
  );
}

/** A run to act on: the only one, or the user's pick. */
export async function pickRun(store: RunStore): Promise<string | undefined> {
  const runs = [...store.runs.values()];
  if (runs.length <= 1) return runs[0]?.id;
  const p = await vscode.window.showQuickPick(
    runs.map((r) => ({ label: r.label, description: r.path, id: r.id })),
    { title: 'Consensus Lens: pick a run' },
  );
  return p?.id;
}

/** A question of the followed runs, picked by the user (after the runs are read). */
export async function pickQuestion(store: RunStore, ready: Promise<void>): Promise<QuestionKey | undefined> {
  await ready;
  await store.idle();
  const items: (vscode.QuickPickItem & { key: QuestionKey })[] = [];
  for (const run of store.runs.values()) {
    for (const [step, keys] of run.steps) {
      for (const k of keys) {
        const key = store.keyOf(run, k);
        if (!key) continue;
        const s = run.summaries.get(k);
        items.push({ label: key.questionId, description: `${run.label} · step ${step}${s?.overturn ? ' · CoRE overturns' : ''}`, key });
        if (items.length >= 5000) break;
      }
    }
  }
  if (items.length === 0) {
    void vscode.window.showInformationMessage('Consensus Lens: no run is open yet.', 'Open Run…').then((c) => c && vscode.commands.executeCommand('consensusLens.openRun'));
    return undefined;
  }
  const p = await vscode.window.showQuickPick(items, { title: 'Consensus Lens: pick a question', matchOnDescription: true });
  return p?.key;
}
