// What a training launch reads from this machine: machine-scoped settings (user/machine values
// only, never the workspace's), terminal profiles and the default shell, and the GPUs (nvidia-smi).
import * as vscode from 'vscode';
import { errnoCode } from '../../util/errors';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { NVIDIA_SMI_ARGS, interpretNvidiaSmi, type GpuQuery } from './gpus';
import { terminalProfileNames, userDefaultShell, validateProfiles, type TrainingProfile } from './profile';
import { ignoredUserValue, readText, settingsFiles } from './settings-files';

/** A terminal profile's path exists (a bare name is looked up on PATH by spawn). */
export const shellExists = (p: string): boolean => !/[\\/]/.test(p) || existsSync(p);

const osKey = (): string => (process.platform === 'win32' ? 'windows' : process.platform === 'darwin' ? 'osx' : 'linux');

/** terminal.integrated.profiles.<os>: defaults merged with the user's, workspace values ignored. */
export function terminalProfiles(): Record<string, unknown> {
  const i = vscode.workspace.getConfiguration('terminal.integrated.profiles').inspect<Record<string, unknown>>(osKey());
  return { ...(i?.defaultValue ?? {}), ...(i?.globalValue ?? {}) };
}

/** The shell of a profile without `terminal`: user-level settings or the login shell only (see userDefaultShell). */
export function defaultShell(): string | undefined {
  const i = vscode.workspace.getConfiguration('terminal.integrated.defaultProfile').inspect<string>(osKey());
  let login: string | undefined;
  try {
    login = process.platform === 'win32' ? process.env.ComSpec : (userInfo().shell ?? undefined);
  } catch {
    login = undefined;
  }
  return userDefaultShell(i?.globalValue, terminalProfiles(), login, shellExists);
}

/**
 * Where machine-scoped settings are read: the user settings of a local window; in a remote window
 * (Remote-SSH, code-server) the Remote settings — VS Code ignores machine-scoped values in the
 * local user settings there.
 */
export function settingsWhere(): { text: string; button: string } {
  return vscode.env.remoteName ? { text: 'Remote settings (Preferences: Open Remote Settings (JSON))', button: 'Open Remote Settings' } : { text: 'user settings', button: 'Open User Settings' };
}
export function openSettings(): Thenable<unknown> {
  return vscode.commands.executeCommand(vscode.env.remoteName ? 'workbench.action.openRemoteSettingsFile' : 'workbench.action.openSettingsJson');
}

/** The settings read through the extension's global storage folder (which locates the settings files). */
export class MachineSettings {
  constructor(private readonly globalStorage: string) {}

  /**
   * A machine-scoped setting's value from user/machine settings (or its default) only: workspace
   * values are ignored; in a remote window so is a value in the local User settings (see
   * settings-files.ts), consistently, and `ignoredUserFile` names the file it sits in.
   */
  userSetting<T>(section: string, key: string): { value: T | undefined; ignoredWorkspace: boolean; ignoredUserFile: string | null } {
    const i = vscode.workspace.getConfiguration(section).inspect<T>(key);
    const ignoredWorkspace = i?.workspaceValue !== undefined || i?.workspaceFolderValue !== undefined;
    const files = this.globalStorage ? settingsFiles(this.globalStorage) : null;
    const ignored = !!files && ignoredUserValue(`${section}.${key}`, !!vscode.env.remoteName, readText(files.user), readText(files.machine));
    return { value: ignored ? i?.defaultValue : (i?.globalValue ?? i?.defaultValue), ignoredWorkspace, ignoredUserFile: ignored && files ? files.user : null };
  }

  readProfiles(log: vscode.LogOutputChannel): { profiles: TrainingProfile[]; errors: string[]; ignored: boolean } {
    const { value, ignoredWorkspace, ignoredUserFile } = this.userSetting<unknown>('consensusLens.training', 'profiles');
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

  queryGpus(): Promise<GpuQuery> {
    const path = this.userSetting<string>('consensusLens.training', 'nvidiaSmi').value || 'nvidia-smi';
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
}
