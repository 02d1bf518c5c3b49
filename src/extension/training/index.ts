// Launching training jobs: the consensusLens.launchTraining command, the Jobs view and
// its commands. Profiles come only from user/machine settings (never the workspace); launching
// is refused in an untrusted workspace; nothing runs before the user presses Enter on the full,
// resolved command. The pure parts (quoting, validation, nvidia-smi) are in quote.ts,
// profile.ts and gpus.ts; the process behind the task's terminal is runner.ts.
import * as vscode from 'vscode';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { userInfo } from 'node:os';
import { NVIDIA_SMI_ARGS, describeGpu, interpretNvidiaSmi, type GpuQuery } from './gpus';
import {
  invocation,
  invocationShell,
  parseGpuList,
  probeQuoteStyle,
  resolveLaunch,
  trainingVariables,
  terminalProfile,
  terminalProfileNames,
  userDefaultShell,
  validateProfiles,
  type ResolvedLaunch,
  type TrainingProfile,
  type WhatIf,
} from './profile';
import { JobPty } from './runner';
import { UnquotableError } from './quote';
import { ignoredUserValue, readText, settingsFiles } from './settings-files';
import { OPERATOR_IDS } from '../../protocol/messages';
import { errnoCode } from '../../util/errors';

export type { WhatIf } from './profile';

export interface TrainingHost {
  /** The consensus panel's current operator and parameters, or null when no panel is open. */
  panelWhatIf(): WhatIf | null;
  /** The configured operator and parameters (settings). */
  configuredWhatIf(): WhatIf;
  /** Follows a run folder in the run explorer; the label is shown there. */
  followRun(path: string): { id: string; label: string };
  refreshExplorer(): void;
  log: vscode.LogOutputChannel;
}

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

const TASK_TYPE = 'consensusLens.training';
const PARAM_KEYS: [string, string][] = [
  ['kappa', 'κ'],
  ['tau', 'τ'],
  ['alpha', 'α'],
  ['omega', 'ω'],
  ['lambda', 'λ'],
];

export function whatIfText(w: WhatIf): string {
  return [w.operator, ...PARAM_KEYS.filter(([k]) => typeof w.params[k] === 'number').map(([k, s]) => `${s}=${Number(w.params[k].toPrecision(6))}`)].join(' ');
}

function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

function stateText(j: Job): string {
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

/** A terminal profile's path exists (a bare name is looked up on PATH by spawn). */
const shellExists = (p: string): boolean => !/[\\/]/.test(p) || existsSync(p);

const osKey = (): string => (process.platform === 'win32' ? 'windows' : process.platform === 'darwin' ? 'osx' : 'linux');

/** The extension's global storage folder (set at registration): locates the settings files. */
let globalStorage = '';

/**
 * A machine-scoped setting's value from user/machine settings (or its default) only: workspace
 * values are ignored; in a remote window so is a value in the local User settings (see
 * settings-files.ts), consistently, and `ignoredUserFile` names the file it sits in.
 */
function userSetting<T>(section: string, key: string): { value: T | undefined; ignoredWorkspace: boolean; ignoredUserFile: string | null } {
  const i = vscode.workspace.getConfiguration(section).inspect<T>(key);
  const ignoredWorkspace = i?.workspaceValue !== undefined || i?.workspaceFolderValue !== undefined;
  const files = globalStorage ? settingsFiles(globalStorage) : null;
  const ignored = !!files && ignoredUserValue(`${section}.${key}`, !!vscode.env.remoteName, readText(files.user), readText(files.machine));
  return { value: ignored ? i?.defaultValue : (i?.globalValue ?? i?.defaultValue), ignoredWorkspace, ignoredUserFile: ignored && files ? files.user : null };
}

/** terminal.integrated.profiles.<os>: defaults merged with the user's, workspace values ignored. */
function terminalProfiles(): Record<string, unknown> {
  const i = vscode.workspace.getConfiguration('terminal.integrated.profiles').inspect<Record<string, unknown>>(osKey());
  return { ...(i?.defaultValue ?? {}), ...(i?.globalValue ?? {}) };
}

/** The shell of a profile without `terminal`: user-level settings or the login shell only (see userDefaultShell). */
function defaultShell(): string | undefined {
  const i = vscode.workspace.getConfiguration('terminal.integrated.defaultProfile').inspect<string>(osKey());
  let login: string | undefined;
  try {
    login = process.platform === 'win32' ? process.env.ComSpec : (userInfo().shell ?? undefined);
  } catch {
    login = undefined;
  }
  return userDefaultShell(i?.globalValue, terminalProfiles(), login, shellExists);
}

function readProfiles(log: vscode.LogOutputChannel): { profiles: TrainingProfile[]; errors: string[]; ignored: boolean } {
  const { value, ignoredWorkspace, ignoredUserFile } = userSetting<unknown>('consensusLens.training', 'profiles');
  if (ignoredWorkspace) log.warn('consensusLens.training.profiles in workspace settings is ignored: training profiles are read from user (machine) settings only');
  if (ignoredUserFile) {
    const msg = `Consensus Lens: consensusLens.training.profiles in your User settings (${ignoredUserFile}) is ignored in a remote window: VS Code reads machine-scoped settings from the Remote settings there. Move the profiles to the Remote settings.`;
    log.warn(msg);
    void vscode.window.showWarningMessage(msg, 'Open Remote Settings', 'Open User Settings').then((c) => {
      if (c === 'Open Remote Settings') void vscode.commands.executeCommand('workbench.action.openRemoteSettingsFile');
      if (c === 'Open User Settings') void vscode.window.showTextDocument(vscode.Uri.file(ignoredUserFile));
    });
  }
  return { ...validateProfiles(value ?? [], terminalProfileNames(terminalProfiles())), ignored: !!ignoredUserFile };
}

/**
 * Where machine-scoped settings are read: the user settings of a local window; in a remote window
 * (Remote-SSH, code-server) the Remote settings — VS Code ignores machine-scoped values in the
 * local user settings there.
 */
function settingsWhere(): { text: string; button: string } {
  return vscode.env.remoteName ? { text: 'Remote settings (Preferences: Open Remote Settings (JSON))', button: 'Open Remote Settings' } : { text: 'user settings', button: 'Open User Settings' };
}
function openSettings(): Thenable<unknown> {
  return vscode.commands.executeCommand(vscode.env.remoteName ? 'workbench.action.openRemoteSettingsFile' : 'workbench.action.openSettingsJson');
}

function queryGpus(): Promise<GpuQuery> {
  const path = userSetting<string>('consensusLens.training', 'nvidiaSmi').value || 'nvidia-smi';
  return new Promise((resolve) => {
    execFile(path, NVIDIA_SMI_ARGS, { timeout: 5000, maxBuffer: 1 << 20, encoding: 'utf8' }, (err, stdout, stderr) => {
      // execFile's error carries the exit status as a number, a spawn failure's errno as a string
      const status: unknown = err ? (err as { code?: unknown }).code : 0;
      const code = typeof status === 'number' ? status : null;
      const spawnError = err && errnoCode(err) !== undefined ? `${errnoCode(err)}: ${err.message}` : err && (err as { killed?: boolean }).killed ? 'timed out' : undefined;
      resolve(interpretNvidiaSmi({ code, stdout: stdout ?? '', stderr: stderr ?? '', error: spawnError }));
    });
  });
}

class JobsTree implements vscode.TreeDataProvider<Job | { job: Job; text: string; tip?: string }> {
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

export function registerTraining(context: vscode.ExtensionContext, host: TrainingHost): { noteWhatIf(w: WhatIf): void; jobs: Job[] } {
  globalStorage = context.globalStorageUri.fsPath;
  const jobs: Job[] = [];
  const tree = new JobsTree(() => jobs);
  const view = vscode.window.createTreeView('consensusLens.jobs', { treeDataProvider: tree });
  let lastRescore: { what: WhatIf; at: number } | null = null;
  let ticker: NodeJS.Timeout | undefined;
  const log = host.log;

  const refresh = (): void => {
    tree.refresh();
    const running = jobs.some((j) => j.state === 'running');
    view.badge = running ? { value: jobs.filter((j) => j.state === 'running').length, tooltip: 'running training jobs' } : undefined;
    if (running && !ticker) ticker = setInterval(() => tree.refresh(), 1000);
    if (!running && ticker) {
      clearInterval(ticker);
      ticker = undefined;
    }
  };

  const labelRun = (j: Job): void => {
    if (!j.run || !j.launch.logDir) return;
    // The folder's name, with the run name when the folder does not say it (verl: runs/<run>/rollouts).
    const base = basename(j.launch.logDir);
    j.run.label = `${base.includes(j.launch.runName) ? base : `${j.launch.runName}/${base}`} (job ${stateText(j)})`;
    host.refreshExplorer();
  };

  const follow = (j: Job): void => {
    const dir = j.launch.logDir;
    if (!dir) return;
    const attempt = (): boolean => {
      if (j.run) return true;
      if (!existsSync(dir)) return false;
      j.run = host.followRun(dir);
      labelRun(j);
      log.info(`job ${j.launch.runName}: following ${dir}`);
      return true;
    };
    if (attempt()) return;
    // The job creates its log folder when it starts writing: look for it while it runs.
    const t = setInterval(() => {
      if (attempt() || j.state !== 'running') {
        clearInterval(t);
        attempt();
      }
    }, 500);
    context.subscriptions.push({ dispose: () => clearInterval(t) });
  };

  const trusted = (): boolean => {
    if (vscode.workspace.isTrusted) return true;
    void vscode.window
      .showErrorMessage(
        'Consensus Lens: launching training is disabled because this workspace is not trusted (Restricted Mode). Trust the workspace to launch jobs; inspecting runs works as before.',
        'Manage Workspace Trust',
      )
      .then((c) => c && vscode.commands.executeCommand('workbench.trust.manage'));
    return false;
  };

  const pickGpus = async (profile: TrainingProfile, title: string): Promise<string | undefined> => {
    const q = await queryGpus();
    const preset = profile.gpus ?? '';
    if (q.kind === 'gpus') {
      const presetSet = new Set(preset === 'all' ? q.gpus.map((g) => String(g.index)) : preset.split(',').filter(Boolean));
      const items = q.gpus.map((g) => ({ ...describeGpu(g), picked: presetSet.has(String(g.index)), index: g.index }));
      const picked = await vscode.window.showQuickPick(items, {
        title,
        placeHolder: 'GPUs for the job (memory in use and utilisation from nvidia-smi); none picked = no GPU',
        canPickMany: true,
        ignoreFocusOut: true,
        matchOnDescription: true,
      });
      if (!picked) return undefined;
      return picked.map((p) => String(p.index)).join(',');
    }
    const text = await vscode.window.showInputBox({
      title,
      prompt: `${q.message}: type the devices for the job (e.g. 0,1 or 0-3 or all; empty for none)`,
      value: preset,
      ignoreFocusOut: true,
      validateInput: (v) => {
        const r = parseGpuList(v);
        return r.ok ? null : r.error;
      },
    });
    if (text === undefined) return undefined;
    const r = parseGpuList(text);
    return r.ok ? r.value : undefined;
  };

  /**
   * Confirms the full command before anything runs: a modal dialog shows it whole (a verl command
   * is ~600 characters; a one-line input would cut it), with the folder it runs in and its log
   * folder. Enter (or *Launch*) runs it; *Edit…* opens it in an input box to change it once, and
   * the edited command is confirmed the same way; Escape cancels. Returns the command to run.
   */
  const confirmCommand = async (l: ResolvedLaunch, title: string): Promise<string | undefined> => {
    let command = l.command;
    for (let edits = 0; ; edits++) {
      const buttons = edits === 0 && !/[\r\n]/.test(command) ? ['Launch', 'Edit…'] : ['Launch'];
      const c = await vscode.window.showWarningMessage(`${title}: launch this command?`, { modal: true, detail: `${command}\n\nin ${l.cwd}${l.logDir ? `\nlogs: ${l.logDir}` : ''}` }, ...buttons);
      if (c === 'Launch') return command;
      if (c !== 'Edit…') return undefined;
      const text = await vscode.window.showInputBox({
        title,
        prompt: 'Edit the command (it runs as typed); Enter shows it again for confirmation, Escape cancels.',
        value: command,
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim() ? null : 'The command is empty'),
      });
      if (text === undefined) return undefined;
      command = text;
    }
  };

  const start = async (profile: TrainingProfile, what: WhatIf, launch: ResolvedLaunch, command: string): Promise<Job> => {
    const tp = profile.terminal ? terminalProfile(terminalProfiles(), profile.terminal) : undefined;
    const inv = invocation(command, tp, defaultShell(), shellExists);
    const id = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    const storage = context.globalStorageUri.fsPath;
    const outputFile = join(storage, 'jobs', `${launch.runName.replace(/[^A-Za-z0-9._-]+/g, '_')}-${id}.log`);
    const taskName = `${launch.runName}`;
    const job: Job = {
      id,
      profile,
      what,
      launch,
      command,
      started: Date.now(),
      ended: null,
      exitCode: null,
      state: 'running',
      pid: null,
      execution: null,
      pty: null as unknown as JobPty,
      taskName,
      terminal: null,
      run: null,
      outputFile,
    };
    job.pty = new JobPty(
      inv,
      {
        cwd: launch.cwd,
        env: launch.env,
        command,
        outputFile,
        banner: `Consensus Lens · ${profile.name} · ${whatIfText(what)} · GPUs ${launch.gpus || 'none'}${profile.terminal ? ` · terminal profile ${profile.terminal}` : ''}`,
      },
      {
        onStart: (pid) => {
          job.pid = pid ?? null;
          log.info(`job ${launch.runName} started (pid ${pid}): ${inv.file} ${inv.args.map((a) => JSON.stringify(a)).join(' ')}`);
        },
        onExit: (code) => onExit(job, code),
      },
    );
    const task = new vscode.Task(
      { type: TASK_TYPE, jobId: id, profile: profile.name },
      vscode.workspace.workspaceFolders?.[0] ?? vscode.TaskScope.Workspace,
      taskName,
      'Consensus Lens',
      new vscode.CustomExecution(async () => job.pty),
    );
    task.presentationOptions = { reveal: vscode.TaskRevealKind.Always, panel: vscode.TaskPanelKind.New, focus: false, clear: false, echo: false, showReuseMessage: false };
    task.isBackground = false;
    jobs.push(job);
    const opened = vscode.window.onDidOpenTerminal((t) => {
      if (!job.terminal && t.name.includes(taskName)) job.terminal = t;
    });
    context.subscriptions.push(opened);
    setTimeout(() => opened.dispose(), 30_000);
    try {
      job.execution = await vscode.tasks.executeTask(task);
    } catch (e) {
      jobs.splice(jobs.indexOf(job), 1);
      opened.dispose();
      throw e;
    }
    log.info(`launched ${launch.runName} (${profile.name}, ${whatIfText(what)}, GPUs ${launch.gpus || 'none'}) in ${launch.cwd}: ${command}`);
    refresh();
    follow(job);
    return job;
  };

  const onExit = (job: Job, code: number): void => {
    job.ended = Date.now();
    job.exitCode = code;
    job.state = job.pty.stopRequested ? 'stopped' : code === 0 ? 'succeeded' : 'failed';
    refresh();
    labelRun(job);
    // A run folder that appeared at the very end.
    if (!job.run && job.launch.logDir && existsSync(job.launch.logDir)) {
      job.run = host.followRun(job.launch.logDir);
      labelRun(job);
    }
    log.info(`job ${job.launch.runName} ${job.state} with exit code ${code} after ${duration(job.ended - job.started)}`);
    if (job.state === 'failed') {
      const lines = job.pty.tail.lines(6);
      for (const l of job.pty.tail.lines(40)) log.info(`  ${job.launch.runName} | ${l}`);
      const last = lines.map((l) => l.slice(0, 200)).join(' ⏎ ');
      void vscode.window
        .showErrorMessage(
          `Consensus Lens: training job ${job.launch.runName} (${job.profile.name}) exited with code ${code} after ${duration(job.ended - job.started)}.${last ? ` Last output: ${last}` : ''}`,
          'Show Terminal',
          'Show Output',
          'Re-launch…',
        )
        .then((c) => {
          if (c === 'Show Terminal') void vscode.commands.executeCommand('consensusLens.showJobTerminal', job);
          if (c === 'Show Output') void vscode.window.showTextDocument(vscode.Uri.file(job.outputFile), { preview: true });
          if (c === 'Re-launch…') void vscode.commands.executeCommand('consensusLens.relaunchJob', job);
        });
    } else if (job.state === 'succeeded') {
      void vscode.window.setStatusBarMessage(`Consensus Lens: ${job.launch.runName} finished (exit 0)`, 10_000);
    }
  };

  /** The interactive launch: profile → GPUs → confirm the full command → run. */
  const launchFlow = async (what: WhatIf, source: string, given?: { profile?: string; gpus?: string }): Promise<Job | undefined> => {
    if (!trusted()) return undefined;
    const { profiles, errors, ignored } = readProfiles(log);
    if (errors.length) {
      for (const e of errors) log.warn(`training profiles: ${e}`);
      void vscode.window
        .showWarningMessage(`Consensus Lens: ${errors.length} problem(s) in consensusLens.training.profiles: ${errors.slice(0, 3).join('; ')}${errors.length > 3 ? '; …' : ''}`, settingsWhere().button)
        .then((c) => c && openSettings());
    }
    if (!profiles.length) {
      if (!errors.length && !ignored)
        void vscode.window
          .showInformationMessage(
            `Consensus Lens: no training profile yet. Add one to consensusLens.training.profiles in your ${settingsWhere().text} (see docs/training-jobs.md).`,
            settingsWhere().button,
          )
          .then((c) => c && openSettings());
      return undefined;
    }
    const title = `Launch training · ${whatIfText(what)}${source ? ` (${source})` : ''}`;
    let profile = given?.profile ? profiles.find((p) => p.name === given.profile) : undefined;
    if (given?.profile && !profile) void vscode.window.showWarningMessage(`Consensus Lens: the training profile "${given.profile}" is no longer in the settings; pick another.`);
    if (!profile) {
      const pick = await vscode.window.showQuickPick(
        profiles.map((p) => ({
          label: p.name,
          description: p.command,
          detail: [p.terminal ? `terminal profile ${p.terminal}` : 'default shell', p.logDir ? `logs ${p.logDir}` : 'no log folder', p.gpus !== undefined ? `GPUs ${p.gpus || 'none'}` : '']
            .filter(Boolean)
            .join(' · '),
          profile: p,
        })),
        { title, placeHolder: 'Pick a training profile', ignoreFocusOut: true, matchOnDescription: true },
      );
      if (!pick) return undefined;
      profile = pick.profile;
    }
    const gpus = given?.gpus ?? (await pickGpus(profile, `${title}: GPUs`));
    if (gpus === undefined) return undefined;
    const tp = profile.terminal ? terminalProfile(terminalProfiles(), profile.terminal) : undefined;
    // Values are quoted for the shell that will parse the command (see invocation()).
    const shell = invocationShell(tp, defaultShell(), shellExists);
    const style = await probeQuoteStyle(tp, defaultShell(), shellExists);
    if (!style) {
      const msg = `Consensus Lens: the profile "${profile.name}" runs its command in ${basename(shell)}, whose quoting the launcher does not implement (it quotes for POSIX shells, fish, PowerShell and cmd.exe). Use a terminal profile with one of those shells.`;
      log.warn(msg);
      void vscode.window.showErrorMessage(msg);
      return undefined;
    }
    const ctx = { workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '', date: new Date(), gpus };
    let launch: ResolvedLaunch;
    try {
      launch = resolveLaunch(profile, what, ctx, style);
      // Two launches of one profile within a second would share a run name (and log folder).
      for (let n = 2; jobs.some((j) => j.launch.runName === launch.runName); n++)
        launch = resolveLaunch(profile, what, { ...ctx, runName: `${trainingVariables(profile, what, ctx).runName}-${n}` }, style);
    } catch (e) {
      if (!(e instanceof UnquotableError)) throw e;
      const msg = `Consensus Lens: not launching "${profile.name}": ${e.message}.`;
      log.warn(msg);
      void vscode.window.showErrorMessage(msg);
      return undefined;
    }
    const command = await confirmCommand(launch, `${title}: ${profile.name}`);
    if (command === undefined) return undefined;
    if (!trusted()) return undefined;
    return start(profile, what, launch, command);
  };

  /** The what-if to prefill: the panel's, the last re-score's (asked when both differ), or the settings'. */
  const currentWhatIf = async (): Promise<{ what: WhatIf; source: string } | undefined> => {
    const panel = host.panelWhatIf();
    const rescore = lastRescore?.what;
    if (panel && rescore && whatIfText(panel) !== whatIfText(rescore)) {
      const pick = await vscode.window.showQuickPick(
        [
          { label: whatIfText(panel), description: 'the consensus panel', what: panel, source: 'from the consensus panel' },
          { label: whatIfText(rescore), description: 'the last re-score', what: rescore, source: 'from the last re-score' },
        ],
        { title: 'Launch training: which parameters?', ignoreFocusOut: true },
      );
      return pick && { what: pick.what, source: pick.source };
    }
    if (panel) return { what: panel, source: 'from the consensus panel' };
    if (rescore) return { what: rescore, source: 'from the last re-score' };
    return { what: host.configuredWhatIf(), source: 'configured parameters' };
  };

  const isJob = (x: unknown): x is Job => typeof x === 'object' && x !== null && 'pty' in x && 'launch' in x;
  const pickJob = async (arg: unknown, filter: (j: Job) => boolean = () => true): Promise<Job | undefined> => {
    if (isJob(arg)) return arg;
    if (typeof arg === 'object' && arg !== null && 'job' in arg && isJob((arg as { job: unknown }).job)) return (arg as { job: Job }).job;
    const list = [...jobs].reverse().filter(filter);
    if (list.length <= 1) return list[0];
    const p = await vscode.window.showQuickPick(
      list.map((j) => ({ label: j.launch.runName, description: `${stateText(j)} · ${j.profile.name}`, job: j })),
      { title: 'Consensus Lens: pick a job' },
    );
    return p?.job;
  };

  const findTerminal = (j: Job): vscode.Terminal | undefined => {
    if (j.terminal && vscode.window.terminals.includes(j.terminal)) return j.terminal;
    return vscode.window.terminals.find((t) => t.name.includes(j.taskName));
  };

  context.subscriptions.push(
    view,
    { dispose: () => ticker && clearInterval(ticker) },
    { dispose: () => jobs.forEach((j) => j.pty.stop()) },
    vscode.workspace.onDidGrantWorkspaceTrust(() => refresh()),
    vscode.commands.registerCommand('consensusLens.launchTraining', async (arg?: Partial<WhatIf> & { profile?: string; gpus?: string }) => {
      // Arguments (from another command or a link) are checked: a known operator, finite numbers, a valid GPU list.
      const a = arg && typeof arg === 'object' ? arg : {};
      const explicit = typeof a.operator === 'string' && (OPERATOR_IDS as readonly string[]).includes(a.operator) && a.params && typeof a.params === 'object';
      const params = explicit ? Object.fromEntries(Object.entries(a.params!).filter(([, v]) => typeof v === 'number' && Number.isFinite(v))) : {};
      const given = explicit ? { what: { operator: a.operator!, params: { ...host.configuredWhatIf().params, ...params } }, source: 'given parameters' } : await currentWhatIf();
      if (!given) return undefined;
      const gpus = typeof a.gpus === 'string' ? parseGpuList(a.gpus) : undefined;
      return launchFlow(given.what, given.source, { profile: typeof a.profile === 'string' ? a.profile : undefined, gpus: gpus?.ok ? gpus.value : undefined });
    }),
    vscode.commands.registerCommand('consensusLens.launchTrainingFromPanel', async () => {
      const panel = host.panelWhatIf();
      if (!panel) return void vscode.window.showInformationMessage('Consensus Lens: open the consensus panel first.');
      return launchFlow(panel, 'from the consensus panel');
    }),
    vscode.commands.registerCommand('consensusLens.stopJob', async (arg?: unknown) => {
      const j = await pickJob(arg, (x) => x.state === 'running');
      if (j?.state !== 'running') return;
      log.info(`stopping job ${j.launch.runName}`);
      // Ending the process ends the task and keeps its terminal (with the output) open;
      // TaskExecution.terminate() would close the terminal too. It is the fallback.
      j.pty.stopRequested = true;
      if (j.pty.running) j.pty.stop();
      else j.execution?.terminate();
    }),
    vscode.commands.registerCommand('consensusLens.relaunchJob', async (arg?: unknown) => {
      const j = await pickJob(arg);
      if (!j) return;
      // The profile is read again from the settings; the parameters and GPUs are the job's.
      return launchFlow(j.what, `re-launch of ${j.launch.runName}`, { profile: j.profile.name, gpus: j.launch.gpus });
    }),
    vscode.commands.registerCommand('consensusLens.showJobTerminal', async (arg?: unknown) => {
      const j = await pickJob(arg);
      if (!j) return;
      const t = findTerminal(j);
      log.info(`show terminal of ${j.launch.runName}: ${t ? `"${t.name}"` : `not found among ${vscode.window.terminals.map((x) => JSON.stringify(x.name)).join(', ') || 'no terminals'}`}`);
      if (t) t.show(false);
      else
        void vscode.window
          .showInformationMessage(`Consensus Lens: the terminal of ${j.launch.runName} was closed. Its output is in ${j.outputFile}.`, 'Show Output')
          .then((c) => c && vscode.window.showTextDocument(vscode.Uri.file(j.outputFile)));
    }),
    vscode.commands.registerCommand('consensusLens.openJobRun', async (arg?: unknown) => {
      const j = await pickJob(arg);
      if (!j) return;
      if (!j.launch.logDir) return void vscode.window.showInformationMessage(`Consensus Lens: the profile ${j.profile.name} names no log folder (logDir).`);
      if (!existsSync(j.launch.logDir)) return void vscode.window.showInformationMessage(`Consensus Lens: ${j.launch.logDir} does not exist yet.`);
      j.run ??= host.followRun(j.launch.logDir);
      labelRun(j);
      await vscode.commands.executeCommand('consensusLens.openRun', j.launch.logDir);
    }),
  );
  void vscode.commands.executeCommand('setContext', 'consensusLens.trainingReady', true);

  return {
    noteWhatIf: (what) => {
      lastRescore = { what, at: Date.now() };
    },
    jobs,
  };
}
