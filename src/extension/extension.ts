// Consensus Lens: the VS Code extension host. `activate` is the composition root: it builds the
// run store and each feature (every feature owns its state, its disposables and its commands) and
// wires what one feature tells another. The features call each other only through these hooks, and
// only after `activate` has returned (so a hook may name a feature built after it). Nothing runs
// until a user or a workspace asks for it.
import * as vscode from 'vscode';
import type { ConsensusLensApi } from './api';
import { RunStore } from './model/run-store';
import { safeText } from '../logs/safe-text';
import { WhatIfController } from './whatif/whatif-controller';
import { registerTraining } from './training/training-commands';
import { RunDiscovery, pickQuestion, pickRun } from './runs/discovery';
import { registerRunCommands } from './runs/commands';
import { registerConvert } from './convert/convert-commands';
import { RunExplorer } from './explorer/explorer';
import { RunStatusBar } from './status/status-bar';
import { registerHostLag } from './status/host-lag';
import { Rollouts } from './rollouts/rollouts';
import { ConsensusFeature } from './consensus/consensus';
import { DashboardFeature } from './dashboard/dashboard-feature';
import { registerWhatIfCommands } from './whatif/whatif-commands';
import { registerTokenConfidence } from './tokens/token-decorations';
import { registerCompare } from './compare/run-view';
import { affectsReading, affectsRuns, affectsScores, configuredOperator, configuredParams, groundTruthSetting, indexFolder, pickGroundTruth, maxGroupSize } from './settings';

export function activate(context: vscode.ExtensionContext): ConsensusLensApi {
  const out = vscode.window.createOutputChannel('Consensus Lens', { log: true });
  const log = (m: string): void => out.info(m);
  // Groups are prepared on the what-if engine's worker threads (answer extraction and TF-IDF on
  // untrusted, possibly degenerate model output never run on the host's event loop). The store
  // only prepares after activation has returned.
  const store: RunStore = new RunStore({
    configuredOperator,
    params: configuredParams,
    log: (m) => out.warn(m),
    info: (m) => out.info(safeText(m)),
    groundTruth: groundTruthSetting,
    prepare: (runId, item, opts) => whatIf.engine.prepare(runId, item, { ...opts, maxGroupSize: maxGroupSize() }),
    analyse: (records) => whatIf.engine.analyse(records, groundTruthSetting()),
    // a run reopened (in this window or another) reads its saved index, not its logs
    persistDir: () => indexFolder(vscode.Uri.joinPath(context.globalStorageUri, 'indexes').fsPath),
  });
  const discovery = new RunDiscovery(store, out);
  const question = (): Promise<ReturnType<RunStore['firstQuestion']>> => pickQuestion(store, discovery.ready);
  const openQuestion = (key: NonNullable<ReturnType<RunStore['firstQuestion']>>): void => void vscode.commands.executeCommand('consensusLens.showConsensus', key);

  const whatIf: WhatIfController = new WhatIfController({
    store,
    configuredOperator,
    configuredParams,
    pickRun: () => pickRun(store),
    openQuestion,
    openDashboard: (runId) => void vscode.commands.executeCommand('consensusLens.showDashboard', runId),
    log: out,
  });
  const status: RunStatusBar = new RunStatusBar(store, {
    primaryRun: () => discovery.primary,
    panelRun: () => consensus.panel?.question?.runId,
  });
  const rollouts: Rollouts = new Rollouts(
    store,
    {
      opened: (index) => consensus.panel?.select(index),
      currentQuestion: async () => consensus.panel?.question ?? (await question()),
    },
    registerTokenConfidence(context),
  );
  const explorer: RunExplorer = new RunExplorer(store, {
    runSelected: (runId) => {
      discovery.primary = runId;
      status.pick(runId);
    },
    questionSelected: (key, fromCommand) => (fromCommand ? consensus.show(key) : consensus.follow(key)),
    rolloutSelected: (key, index) => rollouts.open(key, index, undefined, true),
  });
  const consensus: ConsensusFeature = new ConsensusFeature(context, store, {
    whenRead: async (runId) => {
      if (runId) discovery.follow(runId, 'opened');
      await discovery.ready;
      await store.idle();
    },
    selectedQuestion: () => explorer.selectedQuestion(),
    pickQuestion: question,
    openRollout: (key, index, params) => rollouts.open(key, index, params),
    revealInLog: (key, index) => rollouts.reveal(key, index),
    sensitivity: (key, params) => whatIf.sensitivity(key, params),
    shown: () => status.update(),
    log,
  });
  /** Follows a run a command names (a training job's folder, a cluster sweep's run). */
  const followRun = (path: string) => discovery.follow(path, 'opened');
  const dashboard = new DashboardFeature(context, store, whatIf, {
    defaultRun: () => consensus.panel?.question?.runId ?? [...whatIf.last.keys()].pop() ?? discovery.primary,
    openQuestion,
    log,
    followRun: (path) => followRun(path).id,
  });
  registerCompare(context, {
    store,
    whatIf,
    configuredOperator: () => configuredOperator() ?? 'majority',
    configuredParams,
    openRun: (path) => Promise.resolve(vscode.commands.executeCommand<string | undefined>('consensusLens.openRun', path)),
    openQuestion,
    openDashboard: (runId) => void vscode.commands.executeCommand('consensusLens.showDashboard', runId),
    log,
  });
  const training = registerTraining(context, {
    panelWhatIf: () => (consensus.panel ? { operator: configuredOperator() ?? 'majority', params: consensus.panel.parameters } : null),
    configuredWhatIf: () => ({ operator: configuredOperator() ?? 'majority', params: configuredParams() }),
    followRun,
    refreshExplorer: () => explorer.tree.refresh(),
    log: out,
  });

  context.subscriptions.push(
    out,
    store,
    discovery,
    explorer,
    status,
    rollouts,
    consensus,
    dashboard,
    whatIf,
    registerHostLag(store, out),
    registerRunCommands(store, discovery, whatIf, (runId) => status.pick(runId)),
    registerConvert(context, (path) => followRun(path).id, out),
    registerWhatIfCommands(whatIf, (w) => training.noteWhatIf(w)),
    store.onChange(() => status.update()),
    vscode.commands.registerCommand('consensusLens.setGroundTruth', () => pickGroundTruth()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (affectsRuns(e)) void discovery.followConfigured();
      if (affectsReading(e)) store.reread();
      if (affectsScores(e)) store.invalidateSummaries();
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => void discovery.followConfigured()),
  );
  discovery.start();
  status.update();
  return { store, whatIf, dashboard: () => dashboard.panel };
}

export function deactivate(): void {}
