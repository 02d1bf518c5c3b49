// npm 11 runs a dependency's install scripts only when package.json's allowScripts covers it:
// every locked package with an install script has an explicit decision (true: needed; false: not
// run), in the extension's package.json and in the e2e folder's, where code-server's postinstall
// (it installs VS Code's own modules) is essential.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const json = (p: string) => JSON.parse(readFileSync(join(root, p), 'utf8'));

for (const dir of ['.', 'test/e2e']) {
  test(`allowScripts decides every install script in ${dir}/package-lock.json`, () => {
    const pkg = json(`${dir}/package.json`);
    const lock = json(`${dir}/package-lock.json`);
    const allow: Record<string, boolean> = pkg.allowScripts ?? {};
    const withScripts = Object.entries(lock.packages as Record<string, { hasInstallScript?: boolean }>)
      .filter(([path, p]) => path && p.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    assert.ok(withScripts.length > 0);
    for (const name of withScripts) assert.equal(typeof allow[name], 'boolean', `${name} has an install script and no allowScripts entry`);
  });
}

test('the e2e setup runs code-server’s postinstall', () => {
  assert.equal(json('test/e2e/package.json').allowScripts?.['code-server'], true);
});
