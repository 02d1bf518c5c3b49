// One rule for the tests that need a program npm does not install (fish, zsh, dash, Chromium, a
// python3 with numpy or scikit-learn): `bash scripts/setup-tests.sh` (the README's test command
// runs it) installs them; where it could not, the test is skipped with the reason — which the
// test summary prints — and never fails for the missing tool.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const SETUP = 'bash scripts/setup-tests.sh installs it';

/** The executable `name` in /usr/bin, /bin or on PATH; undefined when none. */
export function findExecutable(name: string): string | undefined {
  const dirs = ['/usr/bin', '/bin', ...(process.env.PATH ?? '').split(delimiter).filter(Boolean)];
  return dirs.map((d) => join(d, name)).find((p) => existsSync(p));
}

/** A test's `skip` option: false when every program is installed, else why the test is skipped. */
export function skipWithout(...names: string[]): string | false {
  const missing = names.filter((n) => !findExecutable(n));
  return missing.length ? `${missing.join(' and ')} not installed (${SETUP})` : false;
}

/** The Chromium the browser tests drive: $CHROMIUM_PATH, else Debian's. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find(existsSync);
export const skipWithoutChromium: string | false = CHROMIUM ? false : `Chromium not installed (${SETUP}, or set CHROMIUM_PATH)`;

/** The first of `python3` on PATH and Debian's /usr/bin/python3 that imports every module, or undefined. */
export function pythonWith(...modules: string[]): string | undefined {
  return ['python3', '/usr/bin/python3'].find((py) => spawnSync(py, ['-c', `import ${modules.join(', ')}`], { encoding: 'utf8' }).status === 0);
}
export function skipWithoutPython(...modules: string[]): string | false {
  return pythonWith(...modules) ? false : `no python3 with ${modules.join(', ')} (${SETUP})`;
}
