// The Jobs view: a training job's record, its label and the tree that lists jobs with their
// details (profile, parameters, GPUs, times, exit code, log folder, command).
import * as vscode from 'vscode';
import { paramSpec, type NumericParam } from '../../engine';
import type { ResolvedLaunch, TrainingProfile, WhatIf } from './profile';
import type { JobPty } from './runner';

export type JobState = 'running' | 'succeeded' | 'failed' | 'stopped';

export interface Job {
  id: string;
  profile: TrainingProfile;
  what: WhatIf;
  launch: ResolvedLaunch;
  /** The command that ran (the resolved one, possibly edited by the user). */
  command: string;
  started: number;
  ended: number | null;
  exitCode: number | null;
  state: JobState;
  pid: number | null;
  execution: vscode.TaskExecution | null;
  pty: JobPty;
  taskName: string;
  terminal: vscode.Terminal | null;
  run: { id: string; label: string } | null;
  outputFile: string;
}

/** The parameters a job's label shows, in this order (their symbols come from PARAM_SPECS). */
const SHOWN_PARAMS: readonly NumericParam[] = ['kappa', 'tau', 'alpha', 'omega', 'lambda'];

/** "core κ=0.4 τ=0.1 …": an operator and the shown parameters it sets. */
export function whatIfText(w: WhatIf): string {
  return [w.operator, ...SHOWN_PARAMS.filter((k) => typeof w.params[k] === 'number').map((k) => `${paramSpec(k)!.symbol}=${Number(w.params[k].toPrecision(6))}`)].join(' ');
}

export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

export function stateText(j: Job): string {
  switch (j.state) {
    case 'running':
      return 'running';
    case 'succeeded':
      return 'exit 0';
    case 'failed':
      return `exit ${j.exitCode}`;
    case 'stopped':
      return `stopped (exit ${j.exitCode})`;
  }
}

export class JobsTree implements vscode.TreeDataProvider<Job | { job: Job; text: string; tip?: string }> {
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.emitter.event;
  constructor(private readonly jobs: () => Job[]) {}
  refresh(): void {
    this.emitter.fire();
  }
  getChildren(e?: Job | { job: Job; text: string }): (Job | { job: Job; text: string; tip?: string })[] {
    if (!e) return [...this.jobs()].reverse();
    if (!('pty' in e)) return [];
    const j = e;
    const end = j.ended ?? Date.now();
    const rows: { job: Job; text: string; tip?: string }[] = [
      { job: j, text: `profile: ${j.profile.name}` },
      { job: j, text: `parameters: ${whatIfText(j.what)}` },
      { job: j, text: `GPUs: ${j.launch.gpus || 'none'}` },
      { job: j, text: `started: ${new Date(j.started).toLocaleString()}` },
      { job: j, text: `duration: ${duration(end - j.started)}` },
      { job: j, text: `exit code: ${j.exitCode ?? '—'}` },
      { job: j, text: `log folder: ${j.launch.logDir ?? '(none)'}`, tip: j.launch.logDir ?? undefined },
      { job: j, text: `command: ${j.command}`, tip: j.command },
    ];
    return rows;
  }
  getTreeItem(e: Job | { job: Job; text: string; tip?: string }): vscode.TreeItem {
    if (!('pty' in e)) {
      const item = new vscode.TreeItem(e.text.replace(/\s+/g, ' '), vscode.TreeItemCollapsibleState.None);
      item.tooltip = e.tip ?? e.text;
      item.contextValue = 'jobDetail';
      return item;
    }
    const j = e;
    const item = new vscode.TreeItem(j.launch.runName, vscode.TreeItemCollapsibleState.Collapsed);
    item.id = `job:${j.id}`;
    item.description = `${stateText(j)} · ${duration((j.ended ?? Date.now()) - j.started)} · ${j.profile.name}`;
    item.contextValue = j.state === 'running' ? 'job-running' : 'job-finished';
    item.iconPath = new vscode.ThemeIcon(j.state === 'running' ? 'loading~spin' : j.state === 'succeeded' ? 'pass' : j.state === 'stopped' ? 'debug-stop' : 'error');
    const md = new vscode.MarkdownString(undefined, false);
    md.isTrusted = false;
    md.supportHtml = false;
    md.appendText(`${j.launch.runName} — ${stateText(j)}\nprofile ${j.profile.name} · ${whatIfText(j.what)} · GPUs ${j.launch.gpus || 'none'}\nstarted ${new Date(j.started).toLocaleString()}`);
    item.tooltip = md;
    item.accessibilityInformation = { label: `${j.launch.runName}, ${item.description}` };
    item.command = { command: 'consensusLens.showJobTerminal', title: 'Show Terminal', arguments: [j] };
    return item;
  }
  getParent(e: Job | { job: Job }): Job | undefined {
    return 'pty' in e ? undefined : e.job;
  }
}
