// Where a machine-scoped setting really comes from. In a remote window (Remote-SSH, code-server)
// VS Code reads machine-scoped settings from the Remote settings (`<data>/Machine/settings.json`
// beside the remote extension host) and ignores them in the User settings — but only once the
// extension's configuration schema is known: a value in the User settings is visible to
// `inspect()` until the workbench re-reads its settings (running a task does it), then vanishes.
// So profiles in the User settings of a code-server were offered on the first launch and gone on
// the next. The launcher decides from the files instead, the same way every time: in a remote
// window a User-settings value of a machine-scoped key is ignored (and said so, with the file it
// lives in) unless the Remote settings set the key themselves. Pure: no 'vscode'.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The User and Remote (Machine) settings files next to an extension's global storage folder
 * (`<data>/User/globalStorage/<extension>`), when they exist. */
export function settingsFiles(globalStorage: string): { user: string; machine: string } {
  const data = dirname(dirname(dirname(globalStorage)));
  return { user: join(data, 'User', 'settings.json'), machine: join(data, 'Machine', 'settings.json') };
}

/** Whether a settings file's text sets `key` (a JSON-with-comments object key; good enough to tell where a value lives). */
export function setsKey(text: string | null, key: string): boolean {
  return text?.includes(JSON.stringify(key)) ?? false;
}

export function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/**
 * In a remote window: true when the User settings set `key` and the Remote settings do not, so
 * the value `inspect()` may show comes from the User settings, which VS Code ignores for a
 * machine-scoped key in a remote window (sooner or later). Local windows: always false.
 */
export function ignoredUserValue(key: string, remote: boolean, userText: string | null, machineText: string | null): boolean {
  return remote && setsKey(userText, key) && !setsKey(machineText, key);
}
