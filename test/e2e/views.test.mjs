// e2e: every view says what the CLI says, in real VS Code (code-server + Chromium). The runs of
// fixtures/views (copied into the workspace before the window opens) and of make-insight-runs.ts:
//   - a .jsonl that is not a training log is refused, by *Open Log File as Run* and by
//     *Reopen Editor With… → Consensus Lens Run*, with the reader's reason (`report` says
//     "unsupported file" and exits 1), and no run joins the explorer;
//   - the side-by-side question panel's gate is the tree's (CoRE's), on both sides;
//   - a roll-out's lowest-confidence spans quote the text itself (`$\boxed{2}$`, not JSON);
//   - the dashboard draws the learning signal's roll-out share, with the whole run's shares as
//     `consensus-lens health` prints them;
//   - a NeMo RL log (train_data_step1.jsonl) is listed by the workspace scan;
//   - roll-outs open in one column: the first with no editor open, the one holding a hidden
//     roll-out tab;
//   - a verl question whose `gts` lists ["3", "4"] and whose roll-outs all answer 4: the panel
//     says the label is correct.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { collapseUntilRows, launch, openWorkbench, runCommand, retry, webviewWith } from './lib.mjs';

const URL_ = process.env.E2E_URL;
const ROOT = process.env.E2E_ROOT;
const WORKSPACE = process.env.E2E_WORKSPACE;
let ctx;

async function pick(page, text) {
  await page.locator('.quick-input-widget input[type="text"]').first().waitFor({ state: 'visible', timeout: 20_000 });
  await page.keyboard.type(text);
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: text }).first();
  await row.waitFor({ timeout: 20_000 });
  await row.click();
}

/** Reveals [run, 'step N', question, …] in the explorer, clicks the last row and returns its aria-label. */
async function revealPath(page, path) {
  const title = page.locator('.sidebar .composite.title', { hasText: /consensus lens/i });
  if (!(await title.count()) || !(await title.first().isVisible())) await page.locator('.activitybar [aria-label^="Consensus Lens"]').first().click();
  await title.first().waitFor({ timeout: 10_000 });
  await page.locator('.sidebar .composite.title').first().hover();
  await page.locator('.sidebar .title-actions [aria-label="Collapse All"]').first().click({ timeout: 5_000 });
  await page.waitForTimeout(150);
  let from = 0;
  let label = '';
  for (let depth = 0; depth < path.length; depth++) {
    let index = -1;
    await retry(async () => {
      const rows = await page.locator('.sidebar .monaco-list-row').evaluateAll((els) => els.map((e) => ({ label: e.getAttribute('aria-label') ?? '', level: Number(e.getAttribute('aria-level')) })));
      index = rows.findIndex((r, i) => i >= from && r.level === depth + 1 && (r.label === path[depth] || r.label.startsWith(path[depth] + ',')));
      assert.ok(index >= 0, `tree row "${path[depth]}" in ${JSON.stringify(rows.map((r) => r.label))}`);
      label = rows[index].label;
    }, { timeout: 60_000 });
    const row = page.locator('.sidebar .monaco-list-row').nth(index);
    if (depth === path.length - 1) await row.click();
    else if ((await row.getAttribute('aria-expanded')) === 'false') await row.locator('.monaco-tl-twistie').click();
    from = index;
  }
  return label;
}

/** The explorer's top-level rows (the runs), by their labels before the first comma. */
async function runRows(page) {
  await page.locator('.sidebar .composite.title').first().hover();
  await page.locator('.sidebar .title-actions [aria-label="Collapse All"]').first().click({ timeout: 5_000 });
  await page.waitForTimeout(300);
  return (await page.locator('.sidebar .monaco-list-row[aria-level="1"]').evaluateAll((els) => els.map((e) => (e.getAttribute('aria-label') ?? '').split(',')[0]))).sort();
}

async function quickOpen(page, relPath) {
  await page.evaluate(() => document.activeElement instanceof HTMLElement && document.activeElement.tagName === 'IFRAME' && document.activeElement.blur());
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+P');
  await pick(page, relPath);
}

const editorText = async (page) => (await page.locator('.editor-instance .monaco-editor .view-lines').last().innerText()).replace(/\u00a0/g, ' ').replace(/\n/g, '');
const groups = (page) => page.locator('.part.editor .editor-group-container').count();

before(async () => {
  assert.ok(URL_, 'E2E_URL is not set: run this suite through run.mjs');
  cpSync(join(ROOT, 'test/e2e/fixtures/views'), WORKSPACE, { recursive: true });
  mkdirSync(join(WORKSPACE, 'views-nemo'), { recursive: true });
  cpSync(join(ROOT, 'test/fixtures/logs/writers/nemo-rl/logs/exp_001/train_data_step1.jsonl'), join(WORKSPACE, 'views-nemo/train_data_step1.jsonl'));
  ctx = await launch();
  ctx.page.on('pageerror', (e) => console.log('[pageerror]', e.message));
  await openWorkbench(ctx.page, URL_);
  await ctx.page.locator('.activitybar [aria-label^="Consensus Lens"]').first().click();
  await collapseUntilRows(ctx.page, ['compare-a', 'views-verl', 'views-tokens'], { timeout: 90_000 });
});

afterEach(async (t) => {
  const name = t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
  await ctx?.page.screenshot({ path: join(process.env.E2E_WORK, `views-end-${name}.png`) }).catch(() => {});
});

after(async () => {
  if (ctx) {
    assert.deepEqual(ctx.external, [], 'no network access beyond code-server');
    await ctx.browser.close();
  }
});

test('views: a .jsonl that is not a log is refused with the CLI\u2019s reason by both ways of opening it as a run; no run is added', async () => {
  const { page } = ctx;
  const notes = join(WORKSPACE, 'views-notes/notes.jsonl');
  // What the CLI says of the file: unsupported, exit 1.
  const cli = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'report', notes], { encoding: 'utf8' });
  assert.equal(cli.status, 1);
  const reason = /unsupported file \(([^)]*)\)/.exec(cli.stderr)?.[0];
  assert.ok(reason, cli.stderr);
  await runCommand(page, 'View: Close All Editors');
  const before = await runRows(page);
  await runCommand(page, 'Consensus Lens: Open Log File as Run');
  await pick(page, 'views-notes/notes.jsonl');
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'cannot open this file as a run' });
  await toast.first().waitFor({ timeout: 30_000 });
  assert.ok(((await toast.first().textContent()) ?? '').includes(reason), await toast.first().textContent());
  assert.equal(await page.locator('.tabs-container .tab', { hasText: 'notes.jsonl' }).count(), 0);
  await page.keyboard.press('Escape');
  // Open With…: the file as text, then reopened with the custom editor.
  await quickOpen(page, 'notes.jsonl');
  await page.locator('.tabs-container .tab', { hasText: 'notes.jsonl' }).first().waitFor({ timeout: 20_000 });
  await runCommand(page, 'View: Reopen Editor With...');
  await pick(page, 'Consensus Lens Run');
  const view = await webviewWith(page, '#not-a-run', { timeout: 60_000 });
  const said = (await view.locator('#not-a-run').textContent()) ?? '';
  assert.ok(said.includes(reason), said);
  assert.deepEqual(await runRows(page), before);
  await runCommand(page, 'Notifications: Clear All Notifications');
});

test('views: the side-by-side question panel shows the gate the tree shows (CoRE\u2019s) on both sides', async () => {
  const { page } = ctx;
  await runCommand(page, 'View: Close All Editors');
  await runCommand(page, 'Consensus Lens: Compare Runs…');
  await pick(page, 'compare-a');
  await pick(page, 'with another operator');
  await pick(page, 'majority');
  await pick(page, 'core');
  const view = await webviewWith(page, '#parting', { timeout: 60_000 });
  await retry(async () => assert.equal(await view.locator('#app').getAttribute('data-state'), 'ready'), { timeout: 120_000 });
  const row = view.locator('#parting-table tbody tr').first();
  const questionId = await row.getAttribute('data-question');
  assert.ok(questionId);
  await row.click();
  await retry(async () => assert.equal(await view.locator('#pair-sides .side').count(), 2));
  const sides = await view.locator('#pair-sides .side .small').allTextContents();
  const gates = sides.map((s) => /gate (\d+(?:\.\d+)?)/.exec(s)?.[1]);
  const step = /step (\d+)/.exec(sides[0])?.[1];
  assert.ok(gates[0] && gates[1] && step, sides.join(' | '));
  const treeLabel = await revealPath(page, ['compare-a', `step ${step}`, questionId]);
  const treeGate = /gate (\d+\.\d+)/.exec(treeLabel)?.[1];
  assert.ok(treeGate, treeLabel);
  for (const g of gates) assert.equal(Number(g).toFixed(2), treeGate, `pair ${sides.join(' | ')} vs tree ${treeLabel}`);
});

test('views: a roll-out\u2019s lowest-confidence spans quote the text itself, backslashes as written', async () => {
  const { page } = ctx;
  await runCommand(page, 'View: Close All Editors');
  await revealPath(page, ['views-tokens', 'step 1', 'views/tok', 'roll-out 0']);
  await page.locator('.tabs-container .tab', { hasText: 'roll-out 0' }).first().waitFor({ timeout: 20_000 });
  await retry(async () => assert.match(await editorText(page), /# lowest-confidence spans/));
  const text = await editorText(page);
  assert.match(text, /#   1\. "[^"]*\$\\boxed\{2\}\$[^"]*"  mean log-prob/);
  assert.doesNotMatch(text, /\\\\boxed/);
});

test('views: the dashboard draws the learning signal\u2019s roll-out share, the whole run as `health` prints it', async () => {
  const { page } = ctx;
  const health = execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'health', join(WORKSPACE, 'compare-b')], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const whole = /^ {2}whole run: (.*)$/m.exec(health)?.[1];
  assert.ok(whole && /of roll-outs/.test(whole), health);
  await runCommand(page, 'View: Close All Editors');
  await runCommand(page, 'Consensus Lens: Show Run Dashboard');
  const dash = await webviewWith(page, '#section-health', { timeout: 60_000 });
  const select = dash.locator('#run-select');
  await retry(async () => assert.ok((await select.locator('option', { hasText: 'compare-b' }).count()) > 0));
  await select.selectOption({ label: 'compare-b' });
  await dash.locator('#chart-health-signal-rollouts').waitFor({ timeout: 120_000 });
  assert.equal(((await dash.locator('#signal-total').textContent()) ?? '').trim(), `Whole run: ${whole}.`);
  await dash.locator('#health-signal-rollouts').evaluate((el) => el.scrollIntoView({ block: 'center' }));
  await page.waitForTimeout(500);
});

test('views: a NeMo RL log (train_data_step*.jsonl) is listed by the workspace scan', async () => {
  const { page } = ctx;
  await collapseUntilRows(page, ['views-nemo'], { timeout: 60_000 });
  assert.ok((await runRows(page)).includes('views-nemo'));
});

test('views: roll-outs open in one column — the first with no editor open, the one holding a hidden roll-out tab', async () => {
  const { page } = ctx;
  await runCommand(page, 'View: Close All Editors');
  await retry(async () => assert.equal(await groups(page), 1));
  await revealPath(page, ['views-tokens', 'step 1', 'views/tok', 'roll-out 1']);
  await page.locator('.tabs-container .tab', { hasText: 'roll-out 1' }).first().waitFor({ timeout: 20_000 });
  await page.waitForTimeout(500);
  assert.equal(await groups(page), 1, 'a roll-out opened with no editor open stays in the first column');
  // Hide the roll-out's tab behind a file in the same column (kept open: a preview tab would be
  // replaced, not hidden), then open another roll-out.
  await page.locator('.tabs-container .tab', { hasText: 'roll-out 1' }).first().dblclick();
  await quickOpen(page, 'notes.jsonl');
  await page.locator('.tabs-container .tab.active', { hasText: 'notes.jsonl' }).first().waitFor({ timeout: 20_000 });
  await revealPath(page, ['views-tokens', 'step 1', 'views/tok', 'roll-out 2']);
  await page.locator('.tabs-container .tab', { hasText: 'roll-out 2' }).first().waitFor({ timeout: 20_000 });
  await page.waitForTimeout(500);
  assert.equal(await groups(page), 1, 'the column holding the hidden roll-out tab is reused');
});

test('views: a verl question whose gts lists ["3", "4"], every roll-out answering 4, is correct in the consensus panel', async () => {
  const { page } = ctx;
  await runCommand(page, 'View: Close All Editors');
  await runCommand(page, 'Consensus Lens: Show Consensus');
  await pick(page, 'views-verl');
  const panel = await webviewWith(page, '#rollout-table', { timeout: 60_000 });
  await retry(async () => assert.equal(await panel.locator('.op[data-op="majority"] .label').getAttribute('data-value'), '4'), { timeout: 60_000 });
  assert.equal(((await panel.locator('.op[data-op="majority"] span.ok').textContent()) ?? '').trim(), '✓');
  assert.equal(await panel.locator('.op[data-op="majority"] span.bad').count(), 0);
});
