// What installs the project and its tests. npm 11 runs a dependency's install scripts only when package.json's allowScripts covers it:
// every locked package with an install script has an explicit decision (true: needed; false: not
// run), in the extension's package.json and in the e2e folder's, where code-server's postinstall
// (it installs VS Code's own modules) is essential.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
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

// The README's two commands: the first installs and runs the main job, the second installs what the
// tests need and runs them; CI runs the same second command, with no install story of its own.
test("the README's two commands, and CI runs the second one", () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /## Try it\n[\s\S]*?```bash\n([\s\S]*?)```/.exec(readme);
  assert.ok(block);
  const commands = block[1].trim().split('\n');
  assert.deepEqual(commands, ['npm ci && npm run build && node dist/cli.js report examples/tiny-ttrl-run', 'bash scripts/test.sh']);
  const ci = readFileSync(join(root, '.ci/run'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'));
  assert.ok(ci.includes('npm ci') && ci.includes(commands[1]), ci.join('\n'));
  assert.ok(!ci.some((l) => /apt-get|pip install/.test(l)), 'CI installs nothing the README command does not');
  assert.match(readFileSync(join(root, 'scripts/test.sh'), 'utf8'), /^bash scripts\/setup-tests\.sh$/m);
});

// scripts/setup-tests.sh with stand-ins for id, sudo, apt-get and python3 (each logs its call):
// what it installs, and how, for each kind of python3 and user.
function setupWith(opts: { root: boolean; python: 'venv' | 'debian' | 'ready' }): { log: string[]; out: string; status: number | null } {
  const dir = mkdtempSync(join(tmpdir(), 'cl-setup-tests-'));
  try {
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    const logFile = join(dir, 'log');
    const stub = (name: string, body: string) => {
      writeFileSync(join(bin, name), `#!/bin/bash\necho "${name} $*" >> ${JSON.stringify(logFile)}\n${body}\n`);
      chmodSync(join(bin, name), 0o755);
    };
    stub('dirname', 'echo "${1%/*}"');
    stub('id', `echo ${opts.root ? 0 : 1000}`);
    stub('sudo', 'exit 1'); // sudo that asks for a password
    stub('apt-get', 'exit 0');
    const prefix = opts.python === 'debian' ? '/usr' : '/home/u/venv';
    stub(
      'python3',
      `case "$*" in
  *"import numpy, scipy, sklearn"*) exit ${opts.python === 'ready' ? 0 : 1} ;;
  *sys.executable*) echo ${prefix}/bin/python3 ;;
  *EXTERNALLY-MANAGED*) echo ${opts.python === 'debian' ? 1 : 0} ;;
  *sys.prefix*) echo ${prefix} ;;
esac
exit 0`,
    );
    // Only the stand-ins on PATH: fish, zsh and dash are missing; Chromium is given.
    const r = spawnSync('/bin/bash', [join(root, 'scripts/setup-tests.sh')], { encoding: 'utf8', env: { PATH: bin, CHROMIUM_PATH: '/opt/chromium', HOME: dir } });
    let log: string[] = [];
    try {
      log = readFileSync(logFile, 'utf8').trim().split('\n').filter((l) => !/^(dirname|id|python3 -c)/.test(l));
    } catch {
      log = [];
    }
    return { log, out: r.stdout + r.stderr, status: r.status };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('setup-tests: as root, the shells from Debian and the pinned Python packages with the pip of a venv/pyenv python3', () => {
  const r = setupWith({ root: true, python: 'venv' });
  assert.equal(r.status, 0, r.out);
  assert.deepEqual(r.log, [
    'apt-get update -qq',
    'apt-get install -y -qq --no-install-recommends fish zsh dash',
    'python3 -m pip --version',
    'python3 -m pip install -q --disable-pip-version-check -r scripts/requirements-tests.txt',
  ]);
  assert.match(r.out, /for \/home\/u\/venv\/bin\/python3 \(pip/);
});

test("setup-tests: Debian's own python3 gets Debian's packages (its pip is refused)", () => {
  const r = setupWith({ root: true, python: 'debian' });
  assert.equal(r.status, 0, r.out);
  assert.deepEqual(r.log, [
    'apt-get update -qq',
    'apt-get install -y -qq --no-install-recommends fish zsh dash',
    'apt-get install -y -qq --no-install-recommends python3-numpy python3-scipy python3-sklearn',
  ]);
});

test('setup-tests: without root or sudo nothing from Debian is installed, and it says which tests will be skipped', () => {
  const r = setupWith({ root: false, python: 'ready' });
  assert.equal(r.status, 0, r.out);
  assert.deepEqual(r.log, ['sudo -n true']); // asked, and refused: no password is typed
  assert.match(r.out, /could not install: fish zsh dash .*the tests that need them are skipped/s);
});

test('the pins of the Python test packages are exact', () => {
  const lines = readFileSync(join(root, 'scripts/requirements-tests.txt'), 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#'));
  assert.deepEqual(lines.map((l) => l.split('==')[0]).sort(), ['numpy', 'scikit-learn', 'scipy']);
  for (const l of lines) assert.match(l, /^[a-z-]+==\d+(\.\d+)+$/);
});
