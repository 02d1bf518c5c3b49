// Consensus Lens: the VS Code extension host. Activation wires the run store (src/extension/
// store.ts, on the engine and the log readers), the run explorer, the status bar item, the
// consensus panel and roll-out documents. Nothing runs until a user or a workspace asks for it.
import * as vscode from 'vscode';
import { isAbsolute, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { DEFAULT_MAX_GROUP_SIZE, OPERATOR_IDS, type OperatorId } from '../engine';
import { isQuestionKey, type PanelState, type QuestionKey, type QuestionView } from '../protocol/messages';
import { ConsensusPanel, PANEL_VIEW_TYPE, type PanelHost } from './panel';
import { ALL_PARAMS, SLIDER_PARAMS, defaultParams, sanitizeParams } from './params';
import { RunStore, questionKeyString, type RunEntry } from './store';
import { unsafeRunRoot } from '../logs';
import { RunTree, type Node } from './tree';
import { RolloutDocuments, ROLLOUT_SCHEME, parseRolloutUri } from './rolloutDocs';
import { buildView } from './scoring';
import { RunHealthCache, alarmStatus, runPremise } from './health';
import { statusText, stepStats } from './format';
import { WhatIfController } from './whatif';
import { LagMonitor } from './lag';
import { mayFollowAgain } from './restore';
import { DashboardPanel, DASHBOARD_VIEW_TYPE, type DashboardHost } from './dashboard/panel';
import { registerTraining } from './training';
import { registerTokenConfidence } from './tokens';
import { RunView, registerCompare } from './compare';
import { MAX_CANDIDATES, inFollowedRun, runFolders } from './discover';

const CONFIG = 'consensusLens';

function configuredOperator(): OperatorId {
  const op = vscode.workspace.getConfiguration(CONFIG).get<string>('defaultOperator', 'majority');
  return (OPERATOR_IDS as readonly string[]).includes(op) ? (op as OperatorId) : 'majority';
}

/** consensusLens.maxGroupSize (application scope: user settings only). */
function maxGroupSize(): number {
  const v = vscode.workspace.getConfiguration(CONFIG).get<number>('maxGroupSize');
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : DEFAULT_MAX_GROUP_SIZE;
}

/** Every operator parameter from the settings (SPEC §4), clamped to its range. */
function configuredParams(): Record<string, number> {
  const c = vscode.workspace.getConfiguration(`${CONFIG}.params`);
  const values: Record<string, unknown> = {};
  for (const p of ALL_PARAMS) values[p.key] = c.get(p.key);
  const a = vscode.workspace.getConfiguration(`${CONFIG}.advantage`);
  const out = sanitizeParams(values);
  const eps = a.get<number>('eps');
  if (typeof eps === 'number' && Number.isFinite(eps) && eps >= 0 && eps <= 1) out.advEps = eps;
  if (a.get<string>('scale') === 'none') out.advScaleNone = 1;
  return out;
}

export function activate(context: vscode.ExtensionContext): { store: RunStore } {
  const out = vscode.window.createOutputChannel('Consensus Lens', { log: true });
  // Groups are prepared on the what-if engine's worker threads (answer extraction and TF-IDF on
  // untrusted, possibly degenerate model output never run on the host's event loop). `whatIf` is
  // created below; the store only prepares after activation has returned.
  const store: RunStore = new RunStore({
    configuredOperator,
    params: configuredParams,
    log: (m) => out.warn(m),
    groundTruth: () => (vscode.workspace.getConfiguration(CONFIG).get<string>('groundTruth', 'auto') === 'ignore' ? 'ignore' : 'auto'),
    prepare: (entry, questionId) => whatIf.engine.prepare({ entry, questionId }, maxGroupSize()),
  });
  const tree = new RunTree(store, configuredOperator);
  const treeView = vscode.window.createTreeView('consensusLens.runs', { treeDataProvider: tree, showCollapseAll: true });
  const status = vscode.window.createStatusBarItem('consensusLens.status', vscode.StatusBarAlignment.Left, 50);
  status.name = 'Consensus Lens';
  status.command = 'workbench.view.extension.consensusLens';
  let followed: string | undefined;

  // The run's confidence premise (pooled within-question AUROC), shown next to the τ slider.
  const withRunPremise = (v: QuestionView): QuestionView => {
    const run = store.runs.get(v.key.runId);
    if (run && v.health) {
      const p = runPremise(run.summaries.values());
      v.health.runAuroc = p.auroc;
      v.health.runVerdict = p.verdict;
      v.health.runMessage = p.message;
    }
    return v;
  };
  const viewOf = (key: QuestionKey, params: Record<string, number>): QuestionView | Promise<QuestionView> => {
    // Re-scoring a question already prepared stays synchronous (the slider path).
    const cached = store.cached(key);
    if (cached) return withRunPremise(buildView(cached, params, configuredOperator()));
    return (async () => {
      let g = await store.get(key);
      if (!g) {
        // A panel restored after a reload can ask before its run is read, or for a run that was
        // opened by hand (not in the settings): follow it again and wait for it — only when it
        // is the run of the host's own record, never a path named by the webview (restore.ts).
        if (!store.runs.has(key.runId) && mayFollowAgain(key.runId, context.workspaceState.get('consensusLens.panel')) && existsSync(key.runId)) addRun(key.runId, 'opened');
        await readyPromise;
        await store.idle();
        g = await store.get(key);
      }
      if (!g) throw new Error(`${key.questionId} (step ${key.step}) is not in the open runs`);
      return withRunPremise(buildView(g, params, configuredOperator()));
    })();
  };

  const docs = new RolloutDocuments(
    {
    view: async (key, params) => {
      const g = await store.get(key);
      return g ? buildView(g, params ?? configuredParams(), configuredOperator()) : undefined;
    },
    source: (key, index) => store.entry(key)?.rollouts[index]?.source,
    preview: (key, index) => store.cached(key)?.previews[index] ?? '',
    },
    registerTokenConfidence(context),
  );

  let lastRollout: { key: QuestionKey; index: number } | undefined;
  const openRollout = async (key: QuestionKey, index: number, params?: Record<string, number>, preserveFocus = false): Promise<void> => {
    const run = store.runs.get(key.runId);
    if (!run || !store.entry(key)) return void vscode.window.showWarningMessage(`Consensus Lens: ${key.questionId} is no longer in the run.`);
    await docs.open({ key, index, params }, run.label, preserveFocus);
    lastRollout = { key, index };
    ConsensusPanel.instance?.select(index);
  };

  const revealInLog = async (key: QuestionKey, index: number): Promise<void> => {
    const src = store.entry(key)?.rollouts[index]?.source;
    if (!src) return void vscode.window.showWarningMessage('Consensus Lens: this roll-out has no log file location (read from stdin?).');
    const line = Math.max(0, src.line - 1);
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(src.file));
    const end = doc.lineAt(Math.min(line, doc.lineCount - 1)).range.end;
    // Reuse the column already showing this log file, if any (no new group per reveal).
    const column = vscode.window.visibleTextEditors.find((e) => e.document.uri.fsPath === doc.uri.fsPath)?.viewColumn ?? vscode.ViewColumn.Beside;
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(line, 0, end.line, Math.min(end.character, 2000)), preview: true, viewColumn: column });
  };

  const host: PanelHost = {
    paramSpecs: () => {
      const c = configuredParams();
      return SLIDER_PARAMS.map((p) => ({ ...p, default: c[p.key] ?? p.default }));
    },
    operators: () => [...OPERATOR_IDS],
    defaultParams: configuredParams,
    view: viewOf,
    openRollout,
    revealInLog,
    firstQuestion: () => {
      const sel = treeView.selection[0];
      if (sel?.kind === 'question' || sel?.kind === 'rollout') return sel.key;
      return store.firstQuestion();
    },
    log: (m) => out.info(m),
    remember: (state) => void context.workspaceState.update('consensusLens.panel', state),
    remembered: () => context.workspaceState.get<PanelState>('consensusLens.panel'),
    sensitivity: (key, params) => whatIf.sensitivity(key, params),
  };

  // ---- following runs ---------------------------------------------------------------------
  const workspaceRoot = (): string | undefined => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const resolvePath = (p: string): string => (isAbsolute(p) ? p : resolve(workspaceRoot() ?? process.cwd(), p));

  const addRun = (path: string, origin: RunEntry['origin']): RunEntry => {
    const run = store.add(resolvePath(path), origin);
    followed ??= run.id;
    return run;
  };

  const scanning = (): boolean => vscode.workspace.getConfiguration(CONFIG).get<boolean>('scanWorkspace', true) && !!vscode.workspace.workspaceFolders?.length;
  const followConfigured = async (): Promise<void> => {
    for (const p of vscode.workspace.getConfiguration(CONFIG).get<string[]>('runs', [])) {
      if (typeof p !== 'string' || !p.trim()) continue;
      // a setting can never make the extension walk the whole disk or the home folder
      const unsafe = unsafeRunRoot(resolvePath(p.trim()));
      if (unsafe) out.warn(`consensusLens.runs: ${unsafe}; not followed`);
      else addRun(p.trim(), 'settings');
    }
    if (scanning()) for (const dir of await findWorkspaceRuns()) addRun(dir, 'workspace');
  };

  // Runs that appear while the window is open (a training job started outside our launcher creates
  // its log folder): a log file created outside every followed run triggers one workspace scan,
  // at most one per second (a job writing many files at once costs one scan). Files inside a
  // followed run are its index's business.
  let rescanTimer: NodeJS.Timeout | undefined;
  const scheduleRescan = (file: string): void => {
    if (!scanning() || rescanTimer || inFollowedRun(file, [...store.runs.keys()])) return;
    rescanTimer = setTimeout(() => {
      rescanTimer = undefined;
      const before = store.runs.size;
      void followConfigured().then(() => out.info(`workspace scan after ${file} was created: ${store.runs.size - before} new run(s)`));
    }, 1000);
  };
  // Every creation, not only of log files: a job that makes its folder and then writes into it can
  // be reported as the new folder alone. A new folder, or a log file created or written to,
  // outside the followed runs triggers the scan; anything else costs a prefix check (and a stat).
  const logWatcher = vscode.workspace.createFileSystemWatcher('**/*', false, false, true);
  const isLog = (p: string): boolean => /\.(jsonl|parquet)$/i.test(p);
  logWatcher.onDidCreate((uri) => {
    const p = uri.fsPath;
    if (!scanning() || rescanTimer || inFollowedRun(p, [...store.runs.keys()])) return;
    if (isLog(p)) scheduleRescan(p);
    else void stat(p).then((st) => st.isDirectory() && scheduleRescan(p), () => undefined);
  });
  logWatcher.onDidChange((uri) => isLog(uri.fsPath) && scheduleRescan(uri.fsPath));

  // ---- refreshing views ---------------------------------------------------------------------
  let treeTimer: NodeJS.Timeout | undefined;
  // A change in one run redraws that run's subtree only: a full refresh makes VS Code ask again
  // for every expanded step of every run (thousands of rows in a big run) on the host's thread.
  const treeRuns = new Set<string>();
  let treeAll = false;
  const refreshTree = (runId?: string): void => {
    if (runId === undefined) treeAll = true;
    else treeRuns.add(runId);
    if (treeTimer) return;
    treeTimer = setTimeout(() => {
      treeTimer = undefined;
      if (treeAll) tree.refresh();
      else for (const id of treeRuns) if (store.runs.has(id)) tree.refreshRun(id);
      treeAll = false;
      treeRuns.clear();
    }, 120);
  };
  const healthCache = new RunHealthCache();
  let healthTimer: NodeJS.Timeout | undefined;
  // The status bar shows the run the user last picked (explorer, Open Run…, the panel) or, when a
  // run has grown since, the run that grew last: the training run being written, not whichever
  // run was discovered first.
  let picked: { runId: string; at: number } | undefined;
  let panelRun: string | undefined;
  const statusRun = (): RunEntry | undefined => {
    const p = ConsensusPanel.instance?.question?.runId;
    if (p && p !== panelRun) picked = { runId: p, at: store.growthClock };
    panelRun = p;
    const grown = store.lastGrown();
    const pick = picked && store.runs.get(picked.runId);
    if (grown && (!pick || grown.grownAt > picked!.at)) return grown;
    return pick ?? store.runs.get(followed ?? '') ?? [...store.runs.values()][0];
  };
  const pickRunForStatus = (runId: string): void => {
    picked = { runId, at: store.growthClock };
  };
  const updateStatus = (): void => {
    const run = statusRun();
    if (!run) return status.hide();
    const step = run.latestStep;
    const keys = step === null ? [] : run.steps.get(step) ?? [];
    const st = stepStats(step, keys.map((k) => run.summaries.get(k)));
    status.text = statusText(run.label, st);
    status.tooltip = `Consensus Lens — ${run.path}\nlatest step ${st.step ?? '—'}: ${st.groups} groups (${st.scored} scored), ${st.overturns} CoRE overturns, mean gate ${st.meanGate?.toFixed(4) ?? '—'}\n${run.keys.size} groups, ${run.rollouts} roll-outs in the run${run.loading ? '\nreading…' : ''}`;
    // Run health (docs/health.md): say when the run has raised an alarm or shows a reward bug.
    const health = healthCache.get(run.id, run.summaries);
    const alarm = alarmStatus(health.health);
    if (alarm.text) {
      status.text += ` ${alarm.text}`;
      status.tooltip += `\n${alarm.tooltip}\n(Show Run Dashboard for the timeline)`;
    }
    if (health.stale && !healthTimer) healthTimer = setTimeout(() => ((healthTimer = undefined), updateStatus()), 2100);
    status.accessibilityInformation = { label: status.text.replace(/\$\([^)]*\)\s*/g, '') };
    status.show();
  };

  const openQuestion = (key: QuestionKey): void => void vscode.commands.executeCommand('consensusLens.showConsensus', key);
  const whatIf: WhatIfController = new WhatIfController({
    store,
    configuredOperator,
    configuredParams,
    pickRun: () => pickRun(store),
    openQuestion,
    openDashboard: (runId) => void vscode.commands.executeCommand('consensusLens.showDashboard', runId),
    log: out,
  });
  const dashboardHost: DashboardHost = { store, whatIf, configuredOperator, configuredParams, openQuestion, log: (m) => out.info(m) };
  registerCompare(context, {
    store,
    whatIf,
    configuredOperator,
    configuredParams,
    openRun: (path) => Promise.resolve(vscode.commands.executeCommand<string | undefined>('consensusLens.openRun', path)),
    openQuestion,
    openDashboard: (runId) => void vscode.commands.executeCommand('consensusLens.showDashboard', runId),
    log: (m) => out.info(m),
  });

  const lag = new LagMonitor();
  context.subscriptions.push(
    lag,
    // Waits for the background work on followed runs, then reports the host's event-loop delay
    // since the last call (and resets it): how the e2e suite checks the host stays responsive.
    vscode.commands.registerCommand('consensusLens.showHostLag', async () => {
      await store.summariesDone();
      const r = lag.read();
      lag.reset();
      const summarised = [...store.runs.values()].reduce((n, run) => n + run.summaries.size, 0);
      out.info(`extension host event-loop lag: max ${r.maxMs} ms, mean ${r.meanMs} ms over ${r.seconds} s; ${summarised} questions summarised`);
      return { ...r, summarised };
    }),
    out,
    store,
    logWatcher,
    { dispose: () => rescanTimer && clearTimeout(rescanTimer) },
    treeView,
    status,
    docs,
    { dispose: () => ConsensusPanel.instance?.dispose() },
    store.onChange((e) => {
      refreshTree(e.kind === 'runs' ? undefined : e.runId);
      updateStatus();
      const q = ConsensusPanel.instance?.question;
      // A panel opened before any run was read shows the first question once one arrives.
      if (ConsensusPanel.instance && !q) {
        const first = store.firstQuestion();
        if (first) ConsensusPanel.instance.showQuestion(first);
      }
      if (e.kind === 'run' && e.changed.length && q && q.runId === e.runId) {
        const k = store.runs.get(e.runId)?.keys.get(questionKeyString(q.step, q.questionId));
        if (k && e.changed.includes(k)) ConsensusPanel.instance!.refresh();
      }
    }),
    vscode.workspace.registerTextDocumentContentProvider(ROLLOUT_SCHEME, docs),
    vscode.languages.registerDocumentLinkProvider({ scheme: ROLLOUT_SCHEME }, docs),
    vscode.window.registerWebviewPanelSerializer(PANEL_VIEW_TYPE, {
      deserializeWebviewPanel: async (panel, state) => {
        ConsensusPanel.revive(panel, context.extensionUri, host, state);
      },
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(`${CONFIG}.runs`) || e.affectsConfiguration(`${CONFIG}.scanWorkspace`)) void followConfigured();
      if (e.affectsConfiguration(`${CONFIG}.params`) || e.affectsConfiguration(`${CONFIG}.defaultOperator`) || e.affectsConfiguration(`${CONFIG}.advantage`)) {
        store.invalidateSummaries();
        ConsensusPanel.instance?.refresh();
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => void followConfigured()),
    treeView.onDidChangeSelection((e) => {
      const n = e.selection[0];
      if (n?.kind === 'run') {
        followed = n.runId;
        pickRunForStatus(n.runId);
        updateStatus();
      } else if (n?.kind === 'question') {
        // The row's command reads the selection; if the selection reached us after the command
        // (it can, right after a window reload), this shows the question the user picked.
        const q = ConsensusPanel.instance?.question;
        if (ConsensusPanel.instance && !(q && q.runId === n.key.runId && q.step === n.key.step && q.questionId === n.key.questionId)) {
          ConsensusPanel.show(context.extensionUri, host, n.key);
          updateStatus();
        }
      }
    }),
    // The explorer's question and roll-out rows (see tree.ts: no arguments, the selection says which).
    vscode.commands.registerCommand('consensusLens.showSelected', async () => {
      const n = treeView.selection[0];
      if (n?.kind === 'question') {
        ConsensusPanel.show(context.extensionUri, host, n.key);
        updateStatus();
      } else if (n?.kind === 'rollout') {
        await openRollout(n.key, n.index, undefined, true);
      }
    }),

    // ---- commands -------------------------------------------------------------------------
    vscode.commands.registerCommand('consensusLens.openRun', async (arg?: vscode.Uri | string) => {
      let path = typeof arg === 'string' ? arg : arg instanceof vscode.Uri ? arg.fsPath : undefined;
      if (!path) {
        const picked = await vscode.window.showOpenDialog({ canSelectFiles: true, canSelectFolders: true, canSelectMany: false, openLabel: 'Follow Run', title: 'Consensus Lens: pick a run folder or a log file', filters: { 'Run logs': ['jsonl', 'parquet'], 'All files': ['*'] } });
        path = picked?.[0]?.fsPath;
      }
      if (!path) return;
      const run = addRun(path, 'opened');
      followed = run.id;
      pickRunForStatus(run.id);
      await vscode.commands.executeCommand('workbench.view.extension.consensusLens');
      updateStatus();
      return run.id;
    }),
    vscode.commands.registerCommand('consensusLens.closeRun', (n?: Node) => {
      if (n?.kind === 'run') void whatIf.engine.forget(n.runId);
      if (n?.kind === 'run') store.remove(n.runId);
    }),
    // Refresh Runs: look for new runs in the workspace and the settings, and re-read the followed ones.
    vscode.commands.registerCommand('consensusLens.refresh', async () => {
      await followConfigured();
      await Promise.all([...store.runs.values()].map((r) => r.index?.refresh()));
    }),
    vscode.commands.registerCommand('consensusLens.showConsensus', async (arg?: QuestionKey | Node) => {
      let key: QuestionKey | undefined = isQuestionKey(arg) ? arg : arg && typeof arg === 'object' && 'kind' in arg && (arg.kind === 'question' || arg.kind === 'rollout') ? arg.key : undefined;
      if (!key && !ConsensusPanel.instance?.question) key = await pickQuestion(store);
      ConsensusPanel.show(context.extensionUri, host, key);
      updateStatus();
    }),
    vscode.commands.registerCommand('consensusLens.openRollout', async (key?: QuestionKey | Node, index?: number) => {
      if (key && typeof key === 'object' && 'kind' in key && key.kind === 'rollout') return openRollout(key.key, key.index);
      if (isQuestionKey(key) && Number.isInteger(index)) return openRollout(key, index!);
      const q = ConsensusPanel.instance?.question ?? (await pickQuestion(store));
      if (!q) return;
      const g = await store.get(q);
      if (!g) return;
      const pick = await vscode.window.showQuickPick(
        g.prepared.answers.map((a, i) => ({ label: `#${i}  ${a === null ? '(no answer)' : a}`, description: g.previews[i].slice(0, 80), index: i })),
        { title: `Roll-outs of ${q.questionId} (step ${q.step})`, matchOnDescription: true },
      );
      if (pick) await openRollout(q, pick.index);
    }),
    vscode.commands.registerCommand('consensusLens.revealInLog', async (key?: QuestionKey | Node, index?: number) => {
      if (key && typeof key === 'object' && 'kind' in key && key.kind === 'rollout') return revealInLog(key.key, key.index);
      if (isQuestionKey(key) && Number.isInteger(index)) return revealInLog(key, index!);
      const uri = vscode.window.activeTextEditor?.document.uri;
      const ref = uri && uri.scheme === ROLLOUT_SCHEME ? parseRolloutUri(uri) : undefined;
      if (ref) return revealInLog(ref.key, ref.index);
      if (lastRollout) return revealInLog(lastRollout.key, lastRollout.index);
      void vscode.window.showInformationMessage('Consensus Lens: open a roll-out first.');
    }),
    // Run-wide what-ifs and the run dashboard: src/extension/whatif, src/extension/dashboard.
    vscode.commands.registerCommand('consensusLens.rescoreRun', async (arg?: Node | string, given?: Record<string, number>, givenOperator?: OperatorId) => {
      const report = await whatIf.rescoreCommand(arg, given, givenOperator);
      if (report && !report.cancelled) training.noteWhatIf({ operator: report.operator, params: report.after.params });
      return report;
    }),
    vscode.commands.registerCommand('consensusLens.showRescoreFlips', (runId?: string) => whatIf.showFlips(typeof runId === 'string' ? runId : undefined)),
    vscode.commands.registerCommand('consensusLens.exportRescore', (runId?: string, target?: string) => whatIf.exportLast(typeof runId === 'string' ? runId : undefined, typeof target === 'string' ? vscode.Uri.file(target) : undefined)),
    vscode.commands.registerCommand('consensusLens.showDashboard', (arg?: Node | string) => {
      // The run asked for, else the consensus panel's, else the last re-scored one, else the followed one.
      const runId = typeof arg === 'string' ? arg : arg?.kind === 'run' ? arg.runId : (ConsensusPanel.instance?.question?.runId ?? [...whatIf.last.keys()].pop() ?? followed);
      DashboardPanel.show(context.extensionUri, dashboardHost, runId);
    }),
    vscode.window.registerWebviewPanelSerializer(DASHBOARD_VIEW_TYPE, {
      deserializeWebviewPanel: async (panel) => {
        DashboardPanel.revive(panel, context.extensionUri, dashboardHost);
      },
    }),
    whatIf,
    { dispose: () => DashboardPanel.instance?.dispose() },
    { dispose: () => healthTimer && clearTimeout(healthTimer) },
    ...(
      [
        ['consensusLens.filterContested', 'contested'],
        ['consensusLens.filterOverturns', 'overturns'],
        ['consensusLens.filterMismatches', 'mismatches'],
        ['consensusLens.filterDegenerate', 'degenerate'],
        ['consensusLens.clearFilters', 'all'],
      ] as const
    ).map(([id, f]) =>
      vscode.commands.registerCommand(id, () => {
        tree.filter = f;
        treeView.description = f === 'all' ? undefined : `${f} only`;
        void vscode.commands.executeCommand('setContext', 'consensusLens.filter', f);
        tree.refresh();
      }),
    ),
    vscode.commands.registerCommand('consensusLens.sortByGate', () => {
      tree.sort = 'gate';
      tree.refresh();
    }),
    vscode.commands.registerCommand('consensusLens.sortById', () => {
      tree.sort = 'id';
      tree.refresh();
    }),
    vscode.commands.registerCommand('consensusLens.sortByLogOrder', () => {
      tree.sort = 'file';
      tree.refresh();
    }),
  );

  // Launching training jobs: src/extension/training.
  const training = registerTraining(context, {
    panelWhatIf: () => (ConsensusPanel.instance ? { operator: configuredOperator(), params: ConsensusPanel.instance.parameters } : null),
    configuredWhatIf: () => ({ operator: configuredOperator(), params: configuredParams() }),
    followRun: (path) => addRun(path, 'opened'),
    refreshExplorer: () => tree.refresh(),
    log: out,
  });

  const ready = followConfigured();
  readyPromise = ready;
  updateStatus();
  return { store, whatIf, dashboard: () => DashboardPanel.instance, runViews: () => RunView.all } as { store: RunStore };
}

export function deactivate(): void {}

/** Folders of the workspace that hold run logs (native, verl or TRL), outermost only (src/extension/discover.ts). */
async function findWorkspaceRuns(): Promise<string[]> {
  const files = await vscode.workspace.findFiles('**/*.{jsonl,parquet}', '**/{node_modules,.git,dist}/**', MAX_CANDIDATES);
  return runFolders(
    files.map((f) => f.fsPath),
    (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
  );
}

async function pickRun(store: RunStore): Promise<string | undefined> {
  const runs = [...store.runs.values()];
  if (runs.length <= 1) return runs[0]?.id;
  const p = await vscode.window.showQuickPick(runs.map((r) => ({ label: r.label, description: r.path, id: r.id })), { title: 'Consensus Lens: pick a run' });
  return p?.id;
}

let readyPromise: Promise<void> = Promise.resolve();

async function pickQuestion(store: RunStore): Promise<QuestionKey | undefined> {
  await readyPromise;
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
