// Readers of the `consensusLens.*` settings (package.json `contributes.configuration`; the
// parameter settings are held to PARAM_SPECS by test/engine/registry.test.ts). Every value is
// checked: a setting out of range falls back to its default or is clamped, never NaN.
import * as vscode from 'vscode';
import { DEFAULT_MAX_GROUP_SIZE, isOperatorId, type OperatorId } from '../engine';
import { ALL_PARAMS, sanitizeParams } from './slider-params';
import { isAbsolute, join } from 'node:path';

export const CONFIG = 'consensusLens';

const config = (section = CONFIG): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration(section);

/**
 * The operator the user says the run trained with (consensusLens.defaultOperator), or undefined when
 * the setting is not set: then each group's logged operator (`extra.operator`) is used, else
 * majority — as the CLI does.
 */
export function configuredOperator(): OperatorId | undefined {
  const i = config().inspect<string>('defaultOperator');
  const op = i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
  return op !== undefined && isOperatorId(op) ? op : undefined;
}

/** consensusLens.maxGroupSize (application scope: user settings only). */
export function maxGroupSize(): number {
  const v = config().get<number>('maxGroupSize');
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : DEFAULT_MAX_GROUP_SIZE;
}

/** Every operator parameter from the settings (docs/contract.md#parameters-and-defaults), clamped to its range. */
export function configuredParams(): Record<string, number> {
  const c = config(`${CONFIG}.params`);
  const values: Record<string, unknown> = {};
  for (const p of ALL_PARAMS) values[p.key] = c.get(p.key);
  const a = config(`${CONFIG}.advantage`);
  const out = sanitizeParams(values);
  const eps = a.get<number>('eps');
  if (typeof eps === 'number' && Number.isFinite(eps) && eps >= 0 && eps <= 1) out.advEps = eps;
  if (a.get<string>('scale') === 'none') out.advScaleNone = 1;
  return out;
}

/**
 * consensusLens.groundTruth (docs/contract.md#ground-truth). A value that is none of the three is
 * said once and read as 'auto' (the settings editor also flags it).
 */
export function groundTruthSetting(): 'auto' | 'use' | 'ignore' {
  const v = config().get<string>('groundTruth', 'auto');
  if (v === 'auto' || v === 'use' || v === 'ignore') return v;
  if (!warnedGroundTruth) {
    warnedGroundTruth = true;
    void vscode.window.showWarningMessage(`consensusLens.groundTruth must be "auto", "use" or "ignore", not ${JSON.stringify(v)}: read as "auto".`);
  }
  return 'auto';
}
let warnedGroundTruth = false;

const GROUND_TRUTH_CHOICES: { mode: 'auto' | 'use' | 'ignore'; detail: string }[] = [
  { mode: 'auto', detail: 'as logged; a verl "gts" equal to the vote in nearly every group is said to look like the pseudo-label (accuracy still shown, the health analysis leaves it out)' },
  { mode: 'use', detail: 'as logged, everywhere: the logged answer is the real one' },
  { mode: 'ignore', detail: 'dropped: no accuracy is shown' },
];

/** The run explorer's toggle: picks consensusLens.groundTruth (the workspace's when a folder is open), which reads the open runs again. */
export async function pickGroundTruth(): Promise<void> {
  const now = groundTruthSetting();
  const pick = await vscode.window.showQuickPick(
    GROUND_TRUTH_CHOICES.map((c) => ({ label: c.mode, description: c.mode === now ? '(current)' : undefined, detail: c.detail })),
    { title: 'Consensus Lens: logged ground truth (a diagnostic, never an operator input)', placeHolder: `now: ${now}` },
  );
  if (!pick || pick.label === now) return;
  const target = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await config().update('groundTruth', pick.label, target);
}

/**
 * The folder of saved run indexes (consensusLens.persistIndex, consensusLens.indexFolder; user
 * settings only): `storage` (VS Code's global storage for the extension) unless another is named;
 * undefined when off.
 */
export function indexFolder(storage: string): string | undefined {
  if (!config().get<boolean>('persistIndex', true)) return undefined;
  const f = config().get<string>('indexFolder', '');
  return typeof f === 'string' && f.trim() ? f.trim() : storage;
}

/** Whether runs found in the workspace are followed (and there is a workspace). */
export function scanningWorkspace(): boolean {
  return config().get<boolean>('scanWorkspace', true) && !!vscode.workspace.workspaceFolders?.length;
}

/** consensusLens.runs: the non-empty entries. */
export function configuredRuns(): string[] {
  return config()
    .get<string[]>('runs', [])
    .filter((p): p is string => typeof p === 'string' && !!p.trim())
    .map((p) => p.trim());
}

/** Whether a configuration change moves any score (parameters, the configured operator, the GRPO view). */
export function affectsScores(e: vscode.ConfigurationChangeEvent): boolean {
  return e.affectsConfiguration(`${CONFIG}.params`) || e.affectsConfiguration(`${CONFIG}.defaultOperator`) || e.affectsConfiguration(`${CONFIG}.advantage`);
}

/** Whether it changes which runs are followed. */
/** A change that reads the open runs again (what a run's logs mean). */
export function affectsReading(e: vscode.ConfigurationChangeEvent): boolean {
  return e.affectsConfiguration(`${CONFIG}.groundTruth`);
}

export function affectsRuns(e: vscode.ConfigurationChangeEvent): boolean {
  return e.affectsConfiguration(`${CONFIG}.runs`) || e.affectsConfiguration(`${CONFIG}.scanWorkspace`);
}

/** consensusLens.tokenConfidence.tokenizerFile: the path, resolved against the first workspace folder; undefined when unset. */
export function tokenizerFile(): string | undefined {
  const p = config().get<string>('tokenConfidence.tokenizerFile', '').trim();
  if (!p) return undefined;
  const root = workspaceRoot();
  return isAbsolute(p) || !root ? p : join(root, p);
}

/** The first workspace folder, the base of relative run paths. */
export function workspaceRoot(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}
