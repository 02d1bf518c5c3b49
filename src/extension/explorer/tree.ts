// The run explorer: runs → steps → questions → roll-outs, children computed lazily from the
// store's index (no scoring on expansion: summaries arrive from the background pass).
import * as vscode from 'vscode';
import type { OperatorId, QuestionKey } from '../../protocol/messages';
import { questionKeyString, type RunEntry, type RunStore } from '../model/run-store';
import { fmt, questionDescription, questionTooltip, show } from '../format';
import { filterQuestions, type ExplorerFilter, type ExplorerSort } from './filters';
import { groundTruthSetting } from '../settings';

export type Node =
  | { kind: 'run'; runId: string }
  | { kind: 'step'; runId: string; step: number }
  | { kind: 'question'; key: QuestionKey; k: string; groupKey: string }
  | { kind: 'rollout'; key: QuestionKey; index: number }
  | { kind: 'notice'; runId: string; message: string };

export class RunTree implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  filter: ExplorerFilter = 'all';
  sort: ExplorerSort = 'file';
  /** Node objects are cached so that reveal() and refreshes keep identities. */
  private readonly nodes = new Map<string, Node>();

  constructor(
    private readonly store: RunStore,
    private readonly configured: () => OperatorId | undefined,
  ) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  /** Redraws one run's row and subtree (VS Code asks again only for what is under it). */
  refreshRun(runId: string): void {
    this.changed.fire(this.runNode(runId));
  }

  private node<T extends Node>(id: string, make: () => T): T {
    let n = this.nodes.get(id);
    if (!n) this.nodes.set(id, (n = make()));
    return n as T;
  }

  runNode(runId: string): Node {
    return this.node(`r:${runId}`, () => ({ kind: 'run', runId }));
  }
  stepNode(runId: string, step: number): Node {
    return this.node(`s:${runId}:${step}`, () => ({ kind: 'step', runId, step }));
  }
  questionNode(key: QuestionKey, groupKey = ''): Node {
    const k = questionKeyString(key.step, key.questionId);
    return this.node(`q:${key.runId}:${k}`, () => ({ kind: 'question', key, k, groupKey }));
  }

  getParent(n: Node): Node | undefined {
    switch (n.kind) {
      case 'run':
      case 'notice':
        return n.kind === 'notice' ? this.runNode(n.runId) : undefined;
      case 'step':
        return this.runNode(n.runId);
      case 'question':
        return this.stepNode(n.key.runId, n.key.step);
      case 'rollout':
        return this.questionNode(n.key);
    }
  }

  getChildren(n?: Node): Node[] | Promise<Node[]> {
    if (!n) return [...this.store.runs.keys()].map((id) => this.runNode(id));
    if (n.kind === 'run') {
      const run = this.store.runs.get(n.runId);
      if (!run) return [];
      const out: Node[] = [];
      if (run.error) out.push({ kind: 'notice', runId: run.id, message: run.error });
      for (const step of run.steps.keys()) {
        if (this.filter !== 'all' && this.visibleQuestions(run, step).length === 0) continue;
        out.push(this.stepNode(run.id, step));
      }
      return out;
    }
    if (n.kind === 'step') {
      const run = this.store.runs.get(n.runId);
      if (!run) return [];
      const out: Node[] = [];
      for (const k of this.visibleQuestions(run, n.step)) {
        const key = this.store.keyOf(run, k);
        if (key) out.push(this.questionNode(key, k));
      }
      return out;
    }
    if (n.kind === 'question') {
      const e = this.store.head(n.key);
      if (!e) return [];
      // Answers need the texts (extraction): prepare the group now (cached afterwards).
      return this.store.get(n.key).then(() => Array.from({ length: e.n }, (_, index) => ({ kind: 'rollout', key: n.key, index }) as Node));
    }
    return [];
  }

  private visibleQuestions(run: RunEntry, step: number): string[] {
    const keys = run.steps.get(step) ?? [];
    return filterQuestions(
      keys,
      (k) => run.summaries.get(k),
      this.filter,
      this.sort,
      (k) => this.store.keyOf(run, k)?.questionId ?? k,
    );
  }

  resolveTreeItem(item: vscode.TreeItem, n: Node): vscode.TreeItem {
    if (n.kind === 'question') item.tooltip = questionTooltip(n.key.questionId, n.key.step, this.store.summary(n.key), this.store.summary(n.key)?.checkedAgainst ?? this.configured() ?? 'majority');
    return item;
  }

  getTreeItem(n: Node): vscode.TreeItem {
    switch (n.kind) {
      case 'run': {
        const run = this.store.runs.get(n.runId);
        const item = new vscode.TreeItem(run?.label ?? n.runId, vscode.TreeItemCollapsibleState.Expanded);
        item.id = `run:${n.runId}`;
        item.contextValue = 'run';
        item.iconPath = new vscode.ThemeIcon(run?.loading ? 'loading~spin' : 'folder-library');
        if (run) {
          const groups = run.groups;
          // the first read streams: its steps and questions show as they are read, with its progress
          const p = run.progress;
          const reading = !run.loading ? '' : p?.totalBytes ? `reading ${Math.min(99, Math.floor((100 * p.bytesRead) / p.totalBytes))}%` : 'reading…';
          const counts = `${run.steps.size} steps · ${groups} groups · ${run.rollouts} roll-outs`;
          item.description = !reading ? counts : groups === 0 ? reading : `${reading} · ${counts}`;
          // Background scoring in progress: the markers of unscored questions are still to come.
          const complete = run.index?.completeCount() ?? 0;
          if (!run.loading && run.summaries.size < complete) item.description += ` · scoring ${run.summaries.size}/${complete}`;
          const warnings = run.notices.filter((x) => x.level !== 'info').length;
          const conf = run.index?.confidence();
          const confLine =
            !conf || conf.rollouts === 0
              ? ''
              : conf.why === null
                ? '\nconfidence (mean token log-prob): every roll-out — CISC and CoRE use it'
                : conf.withConfidence === 0
                  ? `\nno confidence: ${conf.why} — CISC and CoRE run without it`
                  : `\nconfidence on ${conf.withConfidence} of ${conf.rollouts} roll-outs (${conf.why})`;
          // The ground-truth reading is said on every run (docs/contract.md#ground-truth); the target button changes it.
          const truth = groundTruthSetting();
          if (truth !== 'auto') item.description += ` · ground truth: ${truth}`;
          item.tooltip = `${run.path}\nfollowed (${run.origin})${confLine}\nlogged ground truth: ${truth} (the target button changes it)${warnings ? `\n${warnings} notice(s): see the Consensus Lens output` : ''}`;
          item.accessibilityInformation = { label: `${run.label}, ${item.description}` };
        }
        return item;
      }
      case 'step': {
        const run = this.store.runs.get(n.runId);
        const keys = run?.steps.get(n.step) ?? [];
        const visible = run ? this.visibleQuestions(run, n.step).length : 0;
        const item = new vscode.TreeItem(`step ${n.step}`, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `step:${n.runId}:${n.step}`;
        item.contextValue = 'step';
        let overturns = 0;
        let mismatches = 0;
        for (const k of keys) {
          const s = run?.summaries.get(k);
          if (s?.overturn) overturns++;
          if (s && s.mismatches > 0) mismatches++;
        }
        const parts = [this.filter === 'all' ? `${keys.length} questions` : `${visible} of ${keys.length}`];
        if (overturns) parts.push(`${overturns} overturns`);
        if (mismatches) parts.push(`${mismatches} mismatches`);
        item.description = parts.join(' · ');
        item.accessibilityInformation = { label: `step ${n.step}, ${item.description}` };
        item.iconPath = new vscode.ThemeIcon('layers');
        return item;
      }
      case 'question': {
        const s = this.store.summary(n.key);
        const item = new vscode.TreeItem(n.key.questionId, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `q:${n.key.runId}:${n.k}`;
        item.contextValue = 'question';
        item.description = questionDescription(s);
        // The tooltip is built on hover (resolveTreeItem): a step of 1,000 questions expands faster.
        item.iconPath = s?.mismatches
          ? new vscode.ThemeIcon('warning', new vscode.ThemeColor('problemsWarningIcon.foreground'))
          : s?.overturn
            ? new vscode.ThemeIcon('git-compare', new vscode.ThemeColor('charts.purple'))
            : new vscode.ThemeIcon(s?.regime === 'saturated' ? 'pass' : s?.regime === 'competence-floor' ? 'circle-slash' : 'question');
        const e = this.store.head(n.key);
        if (e && !e.complete) item.description = `receiving… (${e.n} roll-outs)`;
        // A command without arguments, acting on the selection: a command with arguments gets a
        // temporary id that is dropped on every refresh, and a click on a row drawn before a
        // refresh (the background pass refreshes often) would hit a stale id and do nothing.
        item.command = { command: 'consensusLens.showSelected', title: 'Show Consensus' };
        item.accessibilityInformation = { label: `${n.key.questionId}, ${item.description}` };
        return item;
      }
      case 'rollout': {
        const g = this.store.cached(n.key);
        const answer = g?.prepared.answers[n.index] ?? null;
        const item = new vscode.TreeItem(`#${n.index}  ${answer === null ? '(no answer)' : show(answer)}`, vscode.TreeItemCollapsibleState.None);
        item.contextValue = 'rollout';
        const c = g?.prepared.hasConfidence[n.index] ? g.prepared.confidence[n.index] : null;
        item.description = [c !== null ? `c ${fmt(c, 3)}` : null, g?.previews[n.index]?.slice(0, 60)].filter(Boolean).join(' · ');
        item.iconPath = new vscode.ThemeIcon('note');
        item.accessibilityInformation = { label: `roll-out ${n.index}, answer ${answer === null ? 'none' : show(answer)}` };
        item.command = { command: 'consensusLens.showSelected', title: 'Open Roll-out' };
        return item;
      }
      case 'notice': {
        const item = new vscode.TreeItem(n.message, vscode.TreeItemCollapsibleState.None);
        item.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('errorForeground'));
        return item;
      }
    }
  }
}
