// Launching training jobs: the consensusLens.launchTraining command, the Jobs view and
// its commands. Profiles come only from user/machine settings (never the workspace); launching
// is refused in an untrusted workspace; nothing runs before the user presses Enter on the full,
// resolved command. The pure parts (quoting, validation, nvidia-smi) are in quote.ts,
// profile.ts and gpus.ts; the process behind the task's terminal is runner.ts; the Jobs view's
// tree is jobs-view.ts; what is read from the machine (settings, shells, GPUs) is machine.ts.
import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describeGpu } from './gpus';
import { invocation, invocationShell, parseGpuList, probeQuoteStyle, resolveLaunch, trainingVariables, terminalProfile, type ResolvedLaunch, type TrainingProfile, type WhatIf } from './profile';
import { JobPty } from './runner';
import { UnquotableError } from './quote';
import { JobsTree, duration, stateText, whatIfText, type Job } from './jobs-view';
import { MachineSettings, defaultShell, openSettings, settingsWhere, shellExists, terminalProfiles } from './machine';
import { OPERATOR_IDS } from '../../protocol/messages';

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

const TASK_TYPE = 'consensusLens.training';

export function registerTraining(context: vscode.ExtensionContext, host: TrainingHost): { noteWhatIf(w: WhatIf): void; jobs: Job[] } {
  const machine = new MachineSettings(context.globalStorageUri.fsPath);
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
    const q = await machine.queryGpus();
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
    const { profiles, errors, ignored } = machine.readProfiles(log);
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
