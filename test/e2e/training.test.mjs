// e2e for launching training jobs, in real VS Code (code-server 4.100.3 + Chromium).
// Started by run.mjs after it installed the .vsix (E2E_WORK/extensions); this file starts its own
// code-server instances so its settings and workspace trust do not touch the main suite:
//   1. a trusted one (--disable-workspace-trust) whose user settings hold two training profiles:
//      "fake-train" runs fixtures/training/fake-train.sh (writes a native log step by step, exits
//      3) and "via-terminal-profile" runs through a configured terminal profile (e2e-bash);
//      the workspace's own .vscode/settings.json holds a profile that must never be offered;
//   2. an untrusted one (workspace trust on, no --disable-workspace-trust): launching is refused.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, openWorkbench, runCommand, webview, retry } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = process.env.E2E_ROOT ?? join(here, '../..');
const WORK = join(process.env.E2E_WORK ?? join(here, '.work'), 'training');
const FIX = join(here, 'fixtures/training');
const codeServer = join(here, 'node_modules/.bin/code-server');
const servers = [];
let ctx;

async function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => res(p));
    });
  });
}

/** Starts code-server on a fresh user-data dir with the installed extension; returns the workbench URL. */
async function startCodeServer(name, { workspaceTrust, settings, machine, workspace }) {
  const dir = join(WORK, name);
  const userData = join(dir, 'user-data');
  const extensions = join(dir, 'extensions');
  mkdirSync(join(userData, 'User'), { recursive: true });
  cpSync(join(process.env.E2E_WORK, 'extensions'), extensions, { recursive: true });
  writeFileSync(join(userData, 'User/settings.json'), JSON.stringify(settings, null, 2));
  // Machine-scoped settings (training profiles, terminal profiles) of a remote window (code-server,
  // Remote-SSH) live in the Remote settings, which code-server keeps in <user-data>/Machine.
  mkdirSync(join(userData, 'Machine'), { recursive: true });
  writeFileSync(join(userData, 'Machine/settings.json'), JSON.stringify(machine, null, 2));
  writeFileSync(join(dir, 'config.yaml'), 'auth: none\ncert: false\n');
  const port = await freePort();
  const args = ['--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check', ...(workspaceTrust ? [] : ['--disable-workspace-trust']), '--disable-getting-started-override', '--user-data-dir', userData, '--extensions-dir', extensions, '--config', join(dir, 'config.yaml'), workspace];
  const server = spawn(codeServer, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CODE_SERVER_CONFIG: join(dir, 'config.yaml'), EXTENSIONS_GALLERY: JSON.stringify({ serviceUrl: '', itemUrl: '', resourceUrlTemplate: '' }) },
    detached: true,
  });
  let log = '';
  server.stdout.on('data', (d) => (log += d));
  server.stderr.on('data', (d) => (log += d));
  servers.push({ server, dir, log: () => log });
  const deadline = Date.now() + 90_000;
  while (!log.includes('HTTP server listening')) {
    if (server.exitCode !== null) throw new Error(`code-server exited:\n${log}`);
    if (Date.now() > deadline) throw new Error(`code-server did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url: `http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`, settingsFile: join(userData, 'User/settings.json'), machineFile: join(userData, 'Machine/settings.json') };
}

const BASE_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.colorTheme': 'Default Light Modern',
  'workbench.tips.enabled': false,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'window.commandCenter': false,
  'chat.commandCenter.enabled': false,
  'git.enabled': false,
  'terminal.integrated.enablePersistentSessions': false,
};

// A workspace whose path has a space: ${workspaceFolder} must arrive quoted.
const WS = join(WORK, 'train ws');
const profiles = (nvidiaSmi) => ({
  'consensusLens.training.nvidiaSmi': nvidiaSmi,
  'consensusLens.training.profiles': [
    {
      name: 'fake-train',
      command: 'sh ${workspaceFolder}/fake-train.sh ${workspaceFolder}/jobs/${runName} ${workspaceFolder}/control/${runName} ${kappa}',
      logDir: '${workspaceFolder}/jobs/${runName}',
      env: { CUDA_VISIBLE_DEVICES: '${gpus}' },
    },
    {
      name: 'via-terminal-profile',
      command: 'echo terminal-profile=$E2E_TERMINAL_PROFILE kappa=${kappa} gpus=$CUDA_VISIBLE_DEVICES > ${workspaceFolder}/profile-check.txt',
      env: { CUDA_VISIBLE_DEVICES: '${gpus}' },
      terminal: 'e2e-bash',
    },
  ],
  'terminal.integrated.profiles.linux': { 'e2e-bash': { path: '/bin/bash', args: ['--noprofile', '--norc'], env: { E2E_TERMINAL_PROFILE: 'yes-from-profile' } } },
});

function prepareWorkspace(ws) {
  mkdirSync(join(ws, '.vscode'), { recursive: true });
  cpSync(join(ROOT, 'examples/demo-run'), join(ws, 'demo-run'), { recursive: true });
  cpSync(join(FIX, 'fake-train.sh'), join(ws, 'fake-train.sh'));
  // Workspace settings must never supply a training profile (they are machine-scoped).
  writeFileSync(join(ws, '.vscode/settings.json'), JSON.stringify({ 'consensusLens.training.profiles': [{ name: 'workspace-evil', command: 'touch ${workspaceFolder}/evil-ran' }], 'consensusLens.training.nvidiaSmi': '/bin/false' }, null, 2));
}

const quickInput = (page) => page.locator('.quick-input-widget');
const quickRow = (page, text) => page.locator('.quick-input-widget .monaco-list-row', { hasText: text }).first();

async function quickRows(page) {
  return page.locator('.quick-input-widget .monaco-list-row').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? e.textContent ?? ''));
}

/** The Jobs view's rows (aria-labels), focusing the view first. */
async function jobRows(page) {
  return page.locator('.part.panel .monaco-list-row').evaluateAll((els) => els.map((e) => ({ label: e.getAttribute('aria-label') ?? '', level: Number(e.getAttribute('aria-level')) })));
}

async function showJobs(page) {
  await runCommand(page, 'Focus on Jobs View');
  await page.locator('.part.panel .pane-body, .part.panel .monaco-list').first().waitFor({ timeout: 10_000 });
}

async function explorerRows(page) {
  return page.locator('.sidebar .monaco-list-row').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? ''));
}

async function openExplorer(page) {
  const title = page.locator('.sidebar .composite.title', { hasText: /consensus lens/i });
  if (!(await title.count()) || !(await title.first().isVisible())) await page.locator('.activitybar [aria-label^="Consensus Lens"]').first().click();
  await title.first().waitFor({ timeout: 10_000 });
}

/**
 * The launch confirmation: a modal dialog that shows the whole command (then the folder it runs
 * in). Returns the dialog's message and the command as shown; Enter launches.
 */
async function confirmation(page) {
  const box = page.locator('.monaco-dialog-box').first();
  await box.waitFor({ timeout: 15_000 });
  const message = (await box.locator('.dialog-message-text').first().textContent()) ?? '';
  const detail = ((await box.locator('.dialog-message-detail').first().textContent()) ?? '').replace(/\u00a0/g, ' ');
  const end = detail.lastIndexOf('in /');
  assert.ok(end > 0, `the dialog names the folder: ${detail}`);
  assert.ok(await box.locator('.dialog-message-detail').first().isVisible());
  return { message, command: detail.slice(0, end).trim() };
}

async function toast(page, text, timeout = 30_000) {
  const t = page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
  await t.waitFor({ timeout });
  return t;
}

before(async () => {
  assert.ok(process.env.E2E_WORK, 'E2E_WORK is not set: run this suite through run.mjs');
  assert.ok(existsSync(codeServer), 'code-server is not installed (test/e2e/setup.sh)');
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WS, { recursive: true });
  prepareWorkspace(WS);
});

afterEach(async (t) => {
  const name = t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
  await ctx?.page.screenshot({ path: join(WORK, `end-${name}.png`) }).catch(() => {});
});

after(async () => {
  if (ctx) {
    assert.deepEqual(ctx.external, [], 'no network access beyond code-server');
    await ctx.browser.close();
  }
  for (const s of servers) {
    writeFileSync(join(s.dir, 'code-server.log'), s.log());
    try {
      process.kill(-s.server.pid, 'SIGTERM');
    } catch {
      /* gone */
    }
  }
});

let trusted;
let fakeJob; // run name of the first job

test('training: launch from the panel with κ = 0.4, follow the run live, exit code 3 reported', async () => {
  trusted = await startCodeServer('trusted', { workspaceTrust: false, settings: { ...BASE_SETTINGS, 'security.workspace.trust.enabled': false, 'consensusLens.defaultOperator': 'core' }, machine: profiles(join(FIX, 'fake-nvidia-smi.sh')), workspace: WS });
  ctx = await launch();
  ctx.page.on('pageerror', (e) => console.log('[pageerror]', e.message));
  const { page } = ctx;
  await openWorkbench(page, trusted.url);

  // The consensus panel on a question; κ to 0.4.
  await runCommand(page, 'Consensus Lens: Show Consensus');
  await quickRow(page, '').waitFor({ timeout: 30_000 });
  await page.keyboard.press('Enter');
  const wv = webview(page);
  await retry(async () => assert.equal(await wv.locator('#app').evaluate((el) => el.dataset.state), 'ready'), { timeout: 40_000 });
  await wv.locator('#slider-kappa').fill('0.4');
  await retry(async () => assert.equal(await wv.locator('#slider-kappa-value').textContent(), '0.4'));
  await page.waitForTimeout(300);

  // The panel's title action.
  await page.locator('iframe.webview.ready').first().click({ position: { x: 5, y: 5 } }).catch(() => {});
  const action = page.locator('.editor-actions [aria-label^="Launch Training with These Parameters"]').first();
  await action.waitFor({ timeout: 15_000 });
  await action.click();

  // Profiles: the user's two, never the workspace's.
  await quickRow(page, 'fake-train').waitFor({ timeout: 15_000 });
  const title = await quickInput(page).locator('.quick-input-title').textContent();
  assert.match(title, /κ=0\.4/, `prefilled from the panel: ${title}`);
  assert.match(title, /^Launch training · core /);
  const offered = await quickRows(page);
  assert.ok(offered.some((l) => l.includes('via-terminal-profile')), offered.join(' | '));
  assert.ok(!offered.some((l) => l.includes('workspace-evil')), `a workspace profile was offered: ${offered.join(' | ')}`);
  await quickRow(page, 'fake-train').click();

  // GPUs from (the fake) nvidia-smi: memory and utilisation per GPU; pick GPU 2.
  await quickRow(page, 'GPU 1: NVIDIA A100-SXM4-80GB').waitFor({ timeout: 15_000 });
  const gpuRows = await quickRows(page);
  assert.ok(gpuRows.some((l) => /GPU 1: NVIDIA A100-SXM4-80GB.*76\.4\/80\.0 GiB used.*100% busy/.test(l)), gpuRows.join(' | '));
  // Tick GPU 2 and see it ticked before accepting: a click that lands while the list is still
  // settling is lost, and Enter would then go on with no GPU.
  // The quick input's own count ("1 Selected") is what Enter accepts: a checkbox read while the
  // list re-renders can say ticked when it is not, and a second click then unticks it.
  const box = quickRow(page, 'GPU 2:').locator('.monaco-checkbox, input[type=checkbox], .quick-input-list-checkbox').first();
  const selected = async () => ((await quickInput(page).locator('.quick-input-count').first().textContent().catch(() => '')) ?? '').trim();
  await retry(async () => {
    if (!/^1\b/.test(await selected())) await box.click();
    await page.waitForTimeout(300);
    assert.match(await selected(), /^1\b/, 'GPU 2 ticked');
    assert.ok(await quickRow(page, 'GPU 2:').locator('[aria-checked="true"], .checked, input:checked').count(), 'GPU 2, not another');
  }, { timeout: 20_000, interval: 500 });
  await page.keyboard.press('Enter');

  // The resolved command, shown whole in a modal dialog (it is longer than a one-line input
  // shows), quoted; Enter launches it.
  const { command } = await confirmation(page);
  assert.ok(command.length > 150, command);
  // ${workspaceFolder} has a space: it arrives single-quoted; the safe parts stay bare.
  assert.match(command, /^sh '[^']*\/train ws'\/fake-train\.sh '[^']*\/train ws'\/jobs\/fake-train-core-\d{8}-\d{6} '[^']*\/train ws'\/control\/fake-train-core-\d{8}-\d{6} 0\.4$/, command);
  fakeJob = /jobs\/(fake-train-core-\d{8}-\d{6})/.exec(command)[1];
  await page.screenshot({ path: join(WORK, 'launch-confirmation.png') });
  await page.keyboard.press('Enter');
  const control = join(WS, 'control', fakeJob);

  // The job runs as a task in its own terminal; the Jobs view shows it running.
  await retry(async () => assert.ok(existsSync(join(control, 'args.txt'))), { timeout: 60_000 });
  assert.deepEqual(readFileSync(join(control, 'args.txt'), 'utf8').split('\n').slice(0, 5), ['0.4', '0.4', 'core', '2', fakeJob]);
  await showJobs(page);
  await retry(async () => {
    const rows = await jobRows(page);
    assert.ok(rows.some((r) => r.label.startsWith(fakeJob) && /running/.test(r.label)), JSON.stringify(rows));
  }, { timeout: 20_000 });

  // Its log folder shows in the run explorer with the job's state, and grows live.
  await openExplorer(page);
  await retry(async () => {
    const rows = await explorerRows(page);
    assert.ok(rows.some((l) => l.startsWith(`${fakeJob} (job running)`)), rows.join(' | '));
  }, { timeout: 30_000 });
  writeFileSync(join(control, 'step-0'), '');
  await retry(async () => {
    const rows = await explorerRows(page);
    assert.ok(rows.some((l) => l.startsWith(`${fakeJob} (job running)`) && /1 steps · 2 groups/.test(l)), rows.join(' | '));
  }, { timeout: 30_000 });
  writeFileSync(join(control, 'step-1'), '');
  await retry(async () => {
    const rows = await explorerRows(page);
    assert.ok(rows.some((l) => l.startsWith(`${fakeJob} (job running)`) && /2 steps · 4 groups/.test(l)), rows.join(' | '));
  }, { timeout: 30_000 });
  await page.screenshot({ path: join(WORK, 'job-running.png') });

  // The last step, then exit 3: a notification with the last lines of output.
  writeFileSync(join(control, 'step-2'), '');
  const t = await toast(page, 'exited with code 3');
  const text = await t.textContent();
  assert.match(text, new RegExp(`training job ${fakeJob} \\(fake-train\\) exited with code 3`));
  assert.match(text, /loss is nan at step 2, giving up/);
  assert.match(text, /wrote step 2/);
  await retry(async () => {
    const rows = await explorerRows(page);
    assert.ok(rows.some((l) => l.startsWith(`${fakeJob} (job exit 3)`) && /3 steps · 6 groups/.test(l)), rows.join(' | '));
  }, { timeout: 20_000 });
  await showJobs(page);
  await retry(async () => {
    const rows = await jobRows(page);
    assert.ok(rows.some((r) => r.label.startsWith(`${fakeJob}, exit 3`)), JSON.stringify(rows));
  });
  await page.screenshot({ path: join(WORK, 'job-exit-3.png') });
  assert.ok(!existsSync(join(WS, 'evil-ran')));
});

test('training: a profile that runs through a configured terminal profile; free-text GPUs without nvidia-smi', async () => {
  const { page } = ctx;
  // No nvidia-smi now: the launcher asks for a device list.
  writeFileSync(trusted.machineFile, JSON.stringify(profiles(join(WORK, 'no-such-nvidia-smi')), null, 2));
  const input = quickInput(page).locator('input[type="text"]').first();
  // The settings file is re-read by the workbench shortly after it changes.
  await retry(async () => {
    await page.keyboard.press('Escape');
    await runCommand(page, 'Consensus Lens: Launch Training…');
    await quickRow(page, 'via-terminal-profile').waitFor({ timeout: 15_000 });
    assert.match(await quickInput(page).locator('.quick-input-title').textContent(), /κ=0\.4/);
    await quickRow(page, 'via-terminal-profile').click();
    await retry(async () => assert.match(await quickInput(page).locator('.quick-input-message').textContent(), /nvidia-smi is not installed: type the devices/), { timeout: 8_000 });
  }, { timeout: 60_000, interval: 1000 });
  await input.fill('0,x');
  await retry(async () => assert.match(await quickInput(page).locator('.quick-input-message').textContent(), /"x" is not a GPU index/));
  await input.fill('0-1');
  await page.waitForTimeout(200);
  await input.press('Enter');
  const { command } = await confirmation(page);
  assert.match(command, /^echo terminal-profile=/, command);
  assert.match(command, /kappa=0\.4 gpus=\$CUDA_VISIBLE_DEVICES > '[^']*\/train ws'\/profile-check\.txt$/, command);
  await page.keyboard.press('Enter');
  const check = join(WS, 'profile-check.txt');
  await retry(async () => assert.equal(existsSync(check) && readFileSync(check, 'utf8'), 'terminal-profile=yes-from-profile kappa=0.4 gpus=0,1\n'), { timeout: 30_000 });
  await showJobs(page);
  await retry(async () => {
    const rows = await jobRows(page);
    assert.ok(rows.some((r) => /^via-terminal-profile-core-\d{8}-\d{6}, exit 0/.test(r.label)), JSON.stringify(rows));
  }, { timeout: 20_000 });
});

test('training: re-launch a job with the same parameters, then stop it', async () => {
  const { page } = ctx;
  await showJobs(page);
  const row = page.locator('.part.panel .monaco-list-row', { hasText: fakeJob }).first();
  await row.hover();
  await row.locator('[aria-label^="Re-launch Job"]').click();
  // Straight to the command (profile and GPUs are the job's); a new run name.
  const { message, command } = await confirmation(page);
  assert.match(command, /fake-train\.sh/);
  assert.match(message, new RegExp(`re-launch of ${fakeJob}`));
  const again = /jobs\/(fake-train-core-\d{8}-\d{6})/.exec(command)[1];
  assert.match(command, / 0\.4$/);
  await page.keyboard.press('Enter');
  await retry(async () => assert.ok(existsSync(join(WS, 'control', again, 'args.txt'))), { timeout: 30_000 });
  assert.equal(readFileSync(join(WS, 'control', again, 'args.txt'), 'utf8').split('\n')[3], '2', 'same GPUs');
  await showJobs(page);
  let running;
  await retry(async () => {
    running = (await jobRows(page)).find((r) => /running/.test(r.label) && r.label.includes('fake-train-core-') && r.label !== fakeJob);
    assert.ok(running, JSON.stringify(await jobRows(page)));
  }, { timeout: 20_000 });
  const name = running.label.split(',')[0];
  const r2 = page.locator(`.part.panel .monaco-list-row[aria-label^="${name},"]`).first();
  await r2.hover();
  await r2.locator('[aria-label^="Stop Job"]').click();
  await retry(async () => {
    const rows = await jobRows(page);
    assert.ok(rows.some((r) => r.label.startsWith(`${name}, stopped`)), JSON.stringify(rows));
  }, { timeout: 20_000 });
  // Clicking a job opens its terminal (the task's, named after the run).
  await page.locator(`.part.panel .monaco-list-row[aria-label^="${name},"]`).first().click();
  await retry(async () => {
    const active = await page.locator('.part.panel .composite-bar .action-item.checked, .part.panel .panel-switcher-container .action-item.checked').first().textContent();
    assert.match(active ?? '', /terminal/i);
    assert.ok(await page.locator('.part.panel', { hasText: name }).count(), 'the job terminal is shown');
  }, { timeout: 15_000 });
  await page.screenshot({ path: join(WORK, 'job-terminal.png') });
});

test('training: launching is refused in an untrusted workspace', async () => {
  const ws = join(WORK, 'untrusted ws');
  mkdirSync(ws, { recursive: true });
  prepareWorkspace(ws);
  const untrusted = await startCodeServer('untrusted', {
    workspaceTrust: true,
    settings: { ...BASE_SETTINGS, 'security.workspace.trust.enabled': true, 'security.workspace.trust.startupPrompt': 'never', 'security.workspace.trust.banner': 'always' },
    machine: profiles(join(FIX, 'fake-nvidia-smi.sh')),
    workspace: ws,
  });
  const page = await ctx.context.newPage();
  await page.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (u.hostname === '127.0.0.1' || ['data:', 'blob:', 'vscode-webview:', 'vscode-file:'].includes(u.protocol)) return route.continue();
    ctx.external.push(u.href);
    return route.abort();
  });
  await openWorkbench(page, untrusted.url);
  // Restricted Mode is on.
  await page.locator('.statusbar-item', { hasText: /Restricted Mode/ }).first().waitFor({ timeout: 30_000 });
  await runCommand(page, 'Consensus Lens: Launch Training…');
  const t = page.locator('.notifications-toasts .notification-toast', { hasText: 'launching training is disabled because this workspace is not trusted' }).first();
  await t.waitFor({ timeout: 30_000 });
  // No profile picker, no job.
  assert.equal(await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'fake-train' }).count(), 0);
  await page.screenshot({ path: join(WORK, 'untrusted.png') });
  await runCommand(page, 'Focus on Jobs View');
  await page.locator('.part.panel', { hasText: 'Launching training is disabled: this workspace is not trusted' }).first().waitFor({ timeout: 15_000 });
  assert.ok(!existsSync(join(ws, 'control')) && !existsSync(join(ws, 'jobs')), 'nothing ran');
  await page.close();
});

test('training: profiles in the User settings of a remote window are ignored the same way every time, with a warning naming the file', async () => {
  const ws = join(WORK, 'user-settings ws');
  mkdirSync(ws, { recursive: true });
  prepareWorkspace(ws);
  // code-server is a remote window: machine-scoped settings are read from its Remote (Machine)
  // settings. Here the profiles sit in the User settings only.
  const server = await startCodeServer('user-settings', {
    workspaceTrust: false,
    settings: { ...BASE_SETTINGS, 'security.workspace.trust.enabled': false, ...profiles(join(FIX, 'fake-nvidia-smi.sh')) },
    machine: {},
    workspace: ws,
  });
  const page = await ctx.context.newPage();
  await page.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (u.hostname === '127.0.0.1' || ['data:', 'blob:', 'vscode-webview:', 'vscode-file:'].includes(u.protocol)) return route.continue();
    ctx.external.push(u.href);
    return route.abort();
  });
  await openWorkbench(page, server.url);
  for (let attempt = 1; attempt <= 2; attempt++) {
    await runCommand(page, 'Consensus Lens: Launch Training…');
    const t = page.locator('.notifications-toasts .notification-toast', { hasText: 'is ignored in a remote window' }).first();
    await t.waitFor({ timeout: 30_000 });
    assert.match((await t.textContent()) ?? '', /User\/settings\.json/);
    // Never offered, not even on the first launch.
    assert.equal(await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'fake-train' }).count(), 0, `attempt ${attempt}`);
    await page.keyboard.press('Escape');
    await runCommand(page, 'Notifications: Clear All Notifications').catch(() => {});
  }
  await page.screenshot({ path: join(WORK, 'user-settings-ignored.png') });
  await page.close();
});
