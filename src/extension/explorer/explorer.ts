// The run explorer as a feature: the tree view, its batched refreshes, its filter and sort
// commands, and what selecting a row means (the rest of the extension is told through the hooks).
import * as vscode from 'vscode';
import type { QuestionKey } from '../../protocol/messages';
import type { RunStore } from '../model/run-store';
import { configuredOperator } from '../settings';
import { RunTree, type Node } from './tree';
import type { ExplorerFilter, ExplorerSort } from './filters';

export interface ExplorerHooks {
  /** A run row was selected. */
  runSelected(runId: string): void;
  /** A question row was selected (or its row command ran). */
  questionSelected(key: QuestionKey, fromCommand: boolean): void;
  /** A roll-out row's command ran. */
  rolloutSelected(key: QuestionKey, index: number): Promise<void>;
}

const FILTERS: readonly [string, ExplorerFilter][] = [
  ['consensusLens.filterContested', 'contested'],
  ['consensusLens.filterOverturns', 'overturns'],
  ['consensusLens.filterMismatches', 'mismatches'],
  ['consensusLens.filterDegenerate', 'degenerate'],
  ['consensusLens.clearFilters', 'all'],
];
const SORTS: readonly [string, ExplorerSort][] = [
  ['consensusLens.sortByGate', 'gate'],
  ['consensusLens.sortById', 'id'],
  ['consensusLens.sortByLogOrder', 'file'],
];

export class RunExplorer implements vscode.Disposable {
  readonly tree: RunTree;
  readonly view: vscode.TreeView<Node>;
  private readonly disposables: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly dirtyRuns = new Set<string>();
  private dirtyAll = false;

  constructor(
    private readonly store: RunStore,
    hooks: ExplorerHooks,
  ) {
    this.tree = new RunTree(store, configuredOperator);
    this.view = vscode.window.createTreeView('consensusLens.runs', { treeDataProvider: this.tree, showCollapseAll: true });
    this.disposables.push(
      this.view,
      { dispose: () => this.timer && clearTimeout(this.timer) },
      store.onChange((e) => this.refresh(e.kind === 'runs' ? undefined : e.runId)),
      this.view.onDidChangeSelection((e) => {
        const n = e.selection[0];
        if (n?.kind === 'run') hooks.runSelected(n.runId);
        // The row's command reads the selection; if the selection reached us after the command
        // (it can, right after a window reload), this shows the question the user picked.
        else if (n?.kind === 'question') hooks.questionSelected(n.key, false);
      }),
      // The question and roll-out rows (tree.ts: no arguments, the selection says which).
      vscode.commands.registerCommand('consensusLens.showSelected', async () => {
        const n = this.view.selection[0];
        if (n?.kind === 'question') hooks.questionSelected(n.key, true);
        else if (n?.kind === 'rollout') await hooks.rolloutSelected(n.key, n.index);
      }),
      ...FILTERS.map(([id, f]) => vscode.commands.registerCommand(id, () => this.setFilter(f))),
      ...SORTS.map(([id, s]) => vscode.commands.registerCommand(id, () => this.setSort(s))),
    );
  }

  /** The selected question (or the roll-out row's question), if any. */
  selectedQuestion(): QuestionKey | undefined {
    const sel = this.view.selection[0];
    return sel?.kind === 'question' || sel?.kind === 'rollout' ? sel.key : undefined;
  }

  /**
   * Redraws a run's subtree (or everything), batched over 120 ms. A change in one run redraws that
   * run only: a full refresh makes VS Code ask again for every expanded step of every run
   * (thousands of rows in a big run) on the host's thread.
   */
  refresh(runId?: string): void {
    if (runId === undefined) this.dirtyAll = true;
    else this.dirtyRuns.add(runId);
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.dirtyAll) this.tree.refresh();
      else for (const id of this.dirtyRuns) if (this.store.runs.has(id)) this.tree.refreshRun(id);
      this.dirtyAll = false;
      this.dirtyRuns.clear();
    }, 120);
  }

  private setFilter(f: ExplorerFilter): void {
    this.tree.filter = f;
    this.view.description = f === 'all' ? undefined : `${f} only`;
    void vscode.commands.executeCommand('setContext', 'consensusLens.filter', f);
    this.tree.refresh();
  }

  private setSort(s: ExplorerSort): void {
    this.tree.sort = s;
    this.tree.refresh();
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
