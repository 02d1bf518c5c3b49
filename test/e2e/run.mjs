// End-to-end runner: builds the .vsix, installs it into a fresh code-server (VS Code 1.100.3),
// starts it on 127.0.0.1, then runs the node:test suite (suite.test.mjs) that drives it with
// playwright-core + Debian's Chromium. (code-server is VS Code 1.100 served to a browser: the offline way to drive the real workbench.)
//
//   node test/e2e/run.mjs            build + package + install + test
//   E2E_SKIP_BUILD=1 node run.mjs    reuse dist/consensus-lens.vsix
//   E2E_KEEP=1                        leave code-server's work folder in test/e2e/.work
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync, statSync, utimesSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const work = join(here, '.work');
const vsix = join(root, 'dist/consensus-lens.vsix');
const codeServer = join(here, 'node_modules/.bin/code-server');
const t0 = Date.now();
const log = (...a) => console.log(`[e2e ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}`);
}

if (!existsSync(codeServer)) throw new Error('code-server is not installed: run test/e2e/setup.sh first');
if (!process.env.E2E_SKIP_BUILD) {
  log('packaging the extension (npm run package)');
  run('npm', ['run', 'package', '--silent'], { cwd: root });
}
if (!existsSync(vsix)) throw new Error(`missing ${vsix}`);
log(`vsix: ${vsix} (${(statSync(vsix).size / 1024).toFixed(1)} KiB)`);

rmSync(work, { recursive: true, force: true });
const userData = join(work, 'user-data');
const extensions = join(work, 'extensions');
const workspace = join(work, 'workspace');
mkdirSync(join(userData, 'User'), { recursive: true });
mkdirSync(extensions, { recursive: true });
mkdirSync(workspace, { recursive: true });
const settings = {
  'workbench.startupEditor': 'none',
  'workbench.colorTheme': 'Default Light Modern',
  'workbench.tips.enabled': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'security.workspace.trust.enabled': false,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'files.watcherExclude': {},
  'window.commandCenter': false,
  'chat.commandCenter.enabled': false,
  'workbench.layoutControl.enabled': false,
  'git.openRepositoryInParentFolders': 'never',
  'git.enabled': false,
  // code-server's port finder runs `ls -l /proc/*/fd/*` and `ps` from the extension host every
  // second or so (ExtHostTunnelService); on a loaded machine each spawn blocks the host's event
  // loop for 10–100 ms, which is not ours and would drown the lag whatif.test.mjs measures.
  // (It scans while a tunnel provider is registered, as code-server's is, unless the source is
  // 'output'.)
  'remote.autoForwardPorts': false,
  'remote.autoForwardPortsSource': 'output',
};
// A run outside the workspace, named in the settings: followed at activation.
const settingsRun = join(work, 'settings-run');
mkdirSync(settingsRun, { recursive: true });
writeFileSync(join(settingsRun, 'log.jsonl'), JSON.stringify({
  kind: 'group', step: 2, question_id: 'from/settings',
  rollouts: Array.from({ length: 5 }, (_, i) => ({ response: `hence \\boxed{${i < 3 ? 8 : 9}}`, mean_logprob: -0.3 })),
}) + '\n');
settings['consensusLens.runs'] = [settingsRun];
writeFileSync(join(userData, 'User/settings.json'), JSON.stringify(settings, null, 2));
// A key for *Show Extension Host Event-Loop Lag*: whatif.test.mjs reads the lag while a run loads,
// and typing the title into the command palette costs the window's renderer over a second of CPU
// — on a two-core machine, CPU the extension host would wait for.
writeFileSync(join(userData, 'User/keybindings.json'), JSON.stringify([{ key: 'ctrl+alt+shift+f12', command: 'consensusLens.showHostLag' }], null, 2));
writeFileSync(join(work, 'config.yaml'), 'auth: none\ncert: false\n');

// The workspace: a copy of examples/demo-run (appended to by the live test) plus a hostile run.
const demo = join(root, 'examples/demo-run');
if (existsSync(demo)) cpSync(demo, join(workspace, 'demo-run'), { recursive: true });
else {
  log('examples/demo-run is absent: generating the e2e fixture run instead');
  run(join(root, 'node_modules/.bin/tsx'), [join(here, 'fixtures/make-demo.ts'), join(workspace, 'demo-run')], { cwd: root });
}
cpSync(join(here, 'fixtures/hostile-run'), join(workspace, 'hostile-run'), { recursive: true });
// Roll-outs that log self-certainty, token entropy and token log-probs, for families.test.mjs.
cpSync(join(here, 'fixtures/family-run'), join(workspace, 'family-run'), { recursive: true });
// A step of 1,000 questions (the explorer's expansion benchmark).
mkdirSync(join(workspace, 'big-run'), { recursive: true });
writeFileSync(join(workspace, 'big-run', 'step-1.jsonl'), Array.from({ length: 1000 }, (_, q) => JSON.stringify({
  kind: 'group', step: 1, question_id: `big/${String(q).padStart(4, '0')}`,
  rollouts: Array.from({ length: 4 }, (_, i) => ({ response: `try ${i}: so \\boxed{${(q + (i > 1 ? 1 : 0)) % 7}}`, mean_logprob: -0.1 * (i + 1) })),
})).join('\n') + '\n');
// A run whose overturns come from reasoning coherence alone (equal confidences): moving κ flips them.
run(join(root, 'node_modules/.bin/tsx'), [join(here, 'fixtures/make-demo.ts'), join(workspace, 'coherence-run')], { cwd: root });
// A finished run: written ten minutes ago. Just written, its last step (fewer roll-outs per group
// than the others) would wait ten idle periods before completing, as a live writer may pause, and
// the re-score test counts complete groups against the CLI's one-shot read.
for (const f of readdirSync(join(workspace, 'coherence-run'))) {
  const old = new Date(Date.now() - 600_000);
  utimesSync(join(workspace, 'coherence-run', f), old, old);
}
// A run with known faults for health.test.mjs: a format collapse at step 10, degenerate pluralities.
run(join(root, 'node_modules/.bin/tsx'), [join(here, 'fixtures/make-health-run.ts'), join(workspace, 'health-run')], { cwd: root });
// Runs for insight.test.mjs: two runs to compare, and roll-outs with token log-probs.
run(join(root, 'node_modules/.bin/tsx'), [join(here, 'fixtures/make-insight-runs.ts'), workspace], { cwd: root });

log('installing the vsix into code-server');
run(codeServer, ['--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', vsix], {
  env: { ...process.env, CODE_SERVER_CONFIG: join(work, 'config.yaml') },
});

const port = await new Promise((res, rej) => {
  const s = createServer();
  s.once('error', rej);
  s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); });
});
log(`starting code-server on 127.0.0.1:${port}`);
const server = spawn(codeServer, [
  '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
  '--disable-workspace-trust', '--disable-getting-started-override', '--user-data-dir', userData,
  '--extensions-dir', extensions, '--config', join(work, 'config.yaml'), workspace,
], {
  stdio: ['ignore', 'pipe', 'pipe'],
  // No extension gallery: the workbench would query open-vsx.org (there is no network here).
  // CONSENSUS_LENS_TEST_WHATIF_DELAY_MS: re-scores pause per chunk, so whatif.test.mjs can cancel one midway.
  env: { ...process.env, CODE_SERVER_CONFIG: join(work, 'config.yaml'), EXTENSIONS_GALLERY: JSON.stringify({ serviceUrl: '', itemUrl: '', resourceUrlTemplate: '' }), CONSENSUS_LENS_TEST_WHATIF_DELAY_MS: '300' },
  detached: true,
});
let serverLog = '';
server.stdout.on('data', (d) => { serverLog += d; });
server.stderr.on('data', (d) => { serverLog += d; });
const killServer = () => { try { process.kill(-server.pid, 'SIGTERM'); } catch { /* gone */ } };
process.on('exit', killServer);
process.on('SIGINT', () => { killServer(); process.exit(130); });

const deadline = Date.now() + 60_000;
for (;;) {
  if (serverLog.includes('HTTP server listening')) break;
  if (server.exitCode !== null) throw new Error(`code-server exited:\n${serverLog}`);
  if (Date.now() > deadline) throw new Error(`code-server did not start:\n${serverLog}`);
  await new Promise((r) => setTimeout(r, 200));
}
log('code-server is up; running the suite');

const env = {
  ...process.env,
  E2E_URL: `http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`,
  E2E_WORK: work,
  E2E_WORKSPACE: workspace,
  E2E_USER_SETTINGS: join(userData, 'User/settings.json'),
  E2E_ROOT: root,
};
const only = process.argv.slice(2);
// E2E_FILES=training.test.mjs runs one file; training.test.mjs starts its own code-servers (trusted, untrusted).
const files = (process.env.E2E_FILES || 'suite.test.mjs,whatif.test.mjs,health.test.mjs,insight.test.mjs,reopen.test.mjs,training.test.mjs,views.test.mjs,families.test.mjs,tinyrun.test.mjs').split(',').map((f) => join(here, f.trim()));
const suite = spawnSync(process.execPath, ['--test', '--test-reporter=spec', '--test-concurrency=1', ...(only.length ? ['--test-name-pattern', only.join('|')] : []), ...files], { stdio: 'inherit', env });
writeFileSync(join(work, 'code-server.log'), serverLog);
killServer();
log(`suite finished with status ${suite.status}`);
if (!process.env.E2E_KEEP && suite.status === 0) rmSync(join(work, 'user-data'), { recursive: true, force: true });
process.exit(suite.status ?? 1);
