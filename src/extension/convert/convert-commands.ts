// Open Trackio Database or slime/miles Dump…: converts the dump through the Python package's
// converter (converter.ts says why and how) into the extension's storage, follows the converted
// folder as a run, and converts again what changes while it is open.
import { mkdirSync } from 'node:fs';
import * as vscode from 'vscode';
import converterSource from '../../../python/consensus_lens/convert.py';
import { MachineSettings, openSettings, settingsWhere } from '../training/machine';
import { type ConvertJob, type ConvertResult, type Dump, DumpFollower, PICKLE_WARNING, convertedFolder, dumpOf, dumpInputs, refusal } from './converter';

// a live Trackio database changes with every metric logged, and each pass reads all its traces again
const POLL_MS = { trackio: 10_000, slime: 2000, miles: 2000 } as const;

export function registerConvert(context: vscode.ExtensionContext, followRun: (path: string) => string, log: vscode.LogOutputChannel): vscode.Disposable {
  const storage = context.globalStorageUri.fsPath;
  const machine = new MachineSettings(storage);
  const followers = new Map<string, DumpFollower>();

  const python = (): string => {
    const v = machine.userSetting<string>('consensusLens.convert', 'python');
    if (v.ignoredWorkspace) log.warn('consensusLens.convert.python in workspace settings is ignored: the interpreter is read from user (machine) settings only');
    return v.value || (process.platform === 'win32' ? 'python' : 'python3');
  };
  const gate = () => ({
    trusted: vscode.workspace.isTrusted,
    allowPickles: machine.userSetting<boolean>('consensusLens.convert', 'allowPickles').value === true,
  });

  const job =
    (d: Dump, out: string) =>
    (inputs: string[]): ConvertJob => ({ python: python(), source: converterSource, kind: d.kind, inputs, out, cwd: storage, gate: gate() });

  const report = (d: Dump) => (r: ConvertResult, inputs: string[]) => {
    if (r.ok) {
      log.info(`converted ${inputs.length} file(s) of ${d.source}: ${r.written.length} written${r.note ? ` (${r.note.replace(/\s+/g, ' ')})` : ''}`);
      return;
    }
    log.warn(`${d.source}: ${r.error}`);
    const button = !r.refused ? undefined : vscode.workspace.isTrusted ? settingsWhere().button : 'Manage Workspace Trust';
    void vscode.window.showErrorMessage(`Consensus Lens: ${d.source}: ${r.error}`, ...(button ? [button] : [])).then((c) => {
      if (c === 'Manage Workspace Trust') void vscode.commands.executeCommand('workbench.trust.manage');
      else if (c) void openSettings();
    });
  };

  const open = async (arg?: vscode.Uri | string): Promise<string | undefined> => {
    let path = typeof arg === 'string' ? arg : arg instanceof vscode.Uri ? arg.fsPath : undefined;
    if (!path) {
      const chosen = await vscode.window.showOpenDialog({
        canSelectFiles: true,
        canSelectFolders: true,
        canSelectMany: false,
        openLabel: 'Convert and Follow',
        title: 'Consensus Lens: a Trackio project database (.db), or a slime / miles --dump-details folder or .pt file',
        filters: { 'Trackio database, slime dump': ['db', 'pt'], 'All files': ['*'] },
      });
      path = chosen?.[0]?.fsPath;
    }
    if (!path) return undefined;
    const d = dumpOf(path);
    if (!d) return void vscode.window.showErrorMessage(`Consensus Lens: ${path} is neither a Trackio database (.db) nor a slime / miles dump (rollout_data/*.pt, trajectory/*.jsonl)`);
    // checked here too, so a refused pickle neither starts a process nor opens an empty run
    const why = refusal(d.kind, gate());
    if (why !== null) {
      report(d)({ ok: false, refused: true, error: why }, dumpInputs(d));
      return undefined;
    }
    if (d.kind === 'slime') {
      const go = await vscode.window.showWarningMessage(`Convert ${d.source}? ${PICKLE_WARNING} Convert only dumps you trust.`, { modal: true }, 'Convert');
      if (go !== 'Convert') return undefined;
    }
    const out = convertedFolder(storage, d);
    mkdirSync(out, { recursive: true });
    let f = followers.get(out);
    if (!f) {
      f = new DumpFollower(d, job(d, out), report(d));
      followers.set(out, f);
    }
    const first = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Consensus Lens: converting ${d.source}` }, () => f!.pass());
    if (first && !first.ok) {
      // tried again from the start when opened again (the interpreter or the file may be fixed)
      f.dispose();
      followers.delete(out);
      return undefined;
    }
    f.start(POLL_MS[d.kind]);
    if (d.kind === 'trackio')
      void vscode.window.showInformationMessage(
        'Consensus Lens: Trackio keeps the traces the trainer chose to log (slime: the first 32 of a batch; TRL async GRPO: 8 every 8th policy version), so a group holds the traces logged for it, not every sample drawn.',
      );
    const runId = followRun(out);
    await vscode.commands.executeCommand('workbench.view.extension.consensusLens');
    return runId;
  };

  return vscode.Disposable.from(vscode.commands.registerCommand('consensusLens.openDump', open), {
    dispose: () => {
      for (const f of followers.values()) f.dispose();
    },
  });
}
