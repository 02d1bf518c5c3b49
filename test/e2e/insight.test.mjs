// e2e of runs side by side, the model's confidence on its text, the learning signal and a log
// file opened as a run, in real VS Code (code-server + Chromium), on the runs of
// fixtures/make-insight-runs.ts. The compare view shows what `consensus-lens compare --json`
// computes; roll-out documents decorate token log-probs (toggled by the command) and say what is
// missing; the custom editor opens a log as a run. Screenshots (light and dark) go to
// media/screenshots/.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { collapseUntilRows, launch, openWorkbench, runCommand, retry, webviewWith } from './lib.mjs';

const URL_ = process.env.E2E_URL;
const ROOT = process.env.E2E_ROOT;
const WORKSPACE = process.env.E2E_WORKSPACE;
const SHOTS = ROOT && join(ROOT, 'media/screenshots');
let ctx;

const camel = (v, inSeries = false) => (Array.isArray(v) ? v.map((x) => camel(x)) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [inSeries ? k : k.replace(/_([a-z])/g, (_, c) => c.toUpperCase()), camel(x, k === 'series')])) : v);
// --json prints snake_case keys; the checks below use the engine's names.
const cli = (...args) => camel(JSON.parse(execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], { encoding: 'utf8', maxBuffer: 64 << 20 })));

async function pick(page, text) {
  // Type to filter (the list renders only the rows in view), then click the matching row.
  await page.locator('.quick-input-widget input[type="text"]').first().waitFor({ state: 'visible', timeout: 20_000 });
  await page.keyboard.type(text);
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: text }).first();
  await row.waitFor({ timeout: 20_000 });
  await row.click();
}

async function theme(page, name, frame) {
  await runCommand(page, 'Preferences: Color Theme');
  await page.waitForTimeout(300);
  await page.keyboard.type(name);
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: name }).first().click();
  const dark = name.includes('Dark');
  await retry(async () => assert.equal((await page.locator('.monaco-workbench.vs-dark').count()) > 0, dark), { timeout: 20_000 });
  if (frame) await retry(async () => assert.equal(/vscode-dark/.test((await frame.locator('body').getAttribute('class')) ?? ''), dark), { timeout: 10_000 });
  await page.waitForTimeout(800);
}

/** Reveals [run, 'step N', question, 'roll-out i'] in the explorer and clicks the last row. */
async function revealPath(page, path) {
  const title = page.locator('.sidebar .composite.title', { hasText: /consensus lens/i });
  if (!(await title.count()) || !(await title.first().isVisible())) await page.locator('.activitybar [aria-label^="Consensus Lens"]').first().click();
  await title.first().waitFor({ timeout: 10_000 });
  await page.locator('.sidebar .composite.title').first().hover();
  await page.locator('.sidebar .title-actions [aria-label="Collapse All"]').first().click({ timeout: 5_000 });
  await page.waitForTimeout(150);
  let from = 0;
  for (let depth = 0; depth < path.length; depth++) {
    let index = -1;
    await retry(async () => {
      const rows = await page.locator('.sidebar .monaco-list-row').evaluateAll((els) => els.map((e) => ({ label: e.getAttribute('aria-label') ?? '', level: Number(e.getAttribute('aria-level')) })));
      index = rows.findIndex((r, i) => i >= from && r.level === depth + 1 && (r.label === path[depth] || r.label.startsWith(path[depth] + ',')));
      assert.ok(index >= 0, `tree row "${path[depth]}" in ${JSON.stringify(rows.map((r) => r.label))}`);
    }, { timeout: 30_000 });
    const row = page.locator('.sidebar .monaco-list-row').nth(index);
    if (depth === path.length - 1) await row.click();
    else if ((await row.getAttribute('aria-expanded')) === 'false') await row.locator('.monaco-tl-twistie').click();
    from = index;
  }
}

before(async () => {
  assert.ok(URL_, 'E2E_URL is not set: run this suite through run.mjs');
  mkdirSync(SHOTS, { recursive: true });
  ctx = await launch();
  ctx.page.on('pageerror', (e) => console.log('[pageerror]', e.message));
  await openWorkbench(ctx.page, URL_);
  await ctx.page.locator('.activitybar [aria-label^="Consensus Lens"]').first().click();
  await collapseUntilRows(ctx.page, ['compare-a', 'compare-b', 'tokens-run'], { timeout: 90_000 });
});

afterEach(async (t) => {
  const name = t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
  await ctx?.page.screenshot({ path: join(process.env.E2E_WORK, `insight-end-${name}.png`) }).catch(() => {});
});

after(async () => {
  if (ctx) {
    assert.deepEqual(ctx.external, [], 'no network access beyond code-server');
    await ctx.browser.close();
  }
});

test('compare: two runs side by side show the CLI\u2019s figures; a parting question opens in both runs', async () => {
  const { page } = ctx;
  const c = cli('compare', join(WORKSPACE, 'compare-a'), join(WORKSPACE, 'compare-b'), '--json');
  await runCommand(page, 'View: Close All Editors');
  await runCommand(page, 'Consensus Lens: Compare Runs…');
  await pick(page, 'compare-a');
  await pick(page, 'compare-b');
  const view = await webviewWith(page, '#parting', { timeout: 60_000 });
  await retry(async () => assert.equal(await view.locator('#app').getAttribute('data-state'), 'ready'), { timeout: 120_000 });
  assert.equal(await view.locator('#app').getAttribute('data-runs'), '2');
  // The same accuracy and parting questions as the command line.
  const stats = await view.locator('.side-stat').allTextContents();
  for (const [k, r] of c.runs.entries()) assert.ok(stats[k].includes(`${(100 * r.labelAccuracy.value).toFixed(1)}% (${r.labelAccuracy.correct}/${r.labelAccuracy.over})`), stats[k]);
  const rows = view.locator('#parting-table tbody tr');
  assert.equal(await rows.count(), c.disagreements.length);
  const first = c.disagreements[0];
  assert.equal(await rows.first().getAttribute('data-question'), first.questionId);
  assert.deepEqual((await rows.first().locator('td').allTextContents()).slice(2, 4), [first.labelA, first.labelB]);
  // One chart per series, and each run's learning signal; B's collapse is an alarm.
  for (const s of ['label_accuracy', 'reward_accuracy', 'majority_ratio', 'gate', 'signal_groups']) await view.locator(`#chart-series-${s}`).waitFor();
  await view.locator('#chart-signal-1').waitFor();
  const alarmsB = await view.locator('#alarms ul[data-side="B"] li.alarm').allTextContents();
  assert.deepEqual(alarmsB.map((t) => t.replace(/^⚠ B: /, '')), c.runs[1].alarms.map((a) => a.message));
  assert.ok(alarmsB.some((t) => /groups with signal 0\.9\d → 0\.00 from step ≈ 12/.test(t)), alarmsB.join('; '));
  await page.screenshot({ path: join(SHOTS, 'compare-light.png') });
  // The question in both runs, side by side.
  await rows.first().click();
  await retry(async () => assert.equal(await view.locator('#pair-sides .side').count(), 2));
  const sides = await view.locator('#pair-sides .side h3').allTextContents();
  assert.match(sides[0], /^A: compare-a — majority/);
  assert.match(sides[1], /^B: compare-b — majority/);
  await view.locator('#pair-sides').scrollIntoViewIfNeeded();
  await theme(page, 'Dark Modern', view);
  await page.screenshot({ path: join(SHOTS, 'compare-dark.png') });
  await theme(page, 'Light Modern', view);
});

test('compare: two operators on one run list exactly the questions CoRE overturns', async () => {
  const { page } = ctx;
  const c = cli('compare', join(WORKSPACE, 'compare-a'), join(WORKSPACE, 'compare-a'), '--operator-a', 'majority', '--operator-b', 'core', '--json');
  await runCommand(page, 'View: Close All Editors');
  await runCommand(page, 'Consensus Lens: Compare Runs…');
  await pick(page, 'compare-a');
  await pick(page, 'with another operator');
  await pick(page, 'majority');
  await pick(page, 'core');
  const view = await webviewWith(page, '#parting', { timeout: 60_000 });
  await retry(async () => assert.equal(await view.locator('#app').getAttribute('data-state'), 'ready'), { timeout: 120_000 });
  const n = c.disagreements.length;
  if (n) assert.equal(await view.locator('#parting-table tbody tr').count(), n);
  else await view.locator('#no-parting').waitFor();
  assert.match((await view.locator('.side-stat').nth(1).textContent()) ?? '', /core/);
});

test('token confidence: per-token backgrounds toggled by the command, the spans and the answer in the header; what is missing said', async () => {
  const { page } = ctx;
  await runCommand(page, 'View: Close All Editors');
  await revealPath(page, ['tokens-run', 'step 1', 'tok/1', 'roll-out 0']);
  await page.locator('.tabs-container .tab', { hasText: 'roll-out 0' }).first().waitFor({ timeout: 20_000 });
  // As rendered: non-breaking spaces back to spaces, wrapped lines joined.
  const text = async () => (await page.locator('.editor-instance .monaco-editor .view-lines').last().innerText()).replace(/\u00a0/g, ' ').replace(/\n/g, '');
  await retry(async () => assert.match(await text(), /# token confidence: 57 tokens, mean log-prob/));
  assert.match(await text(), /# answer tokens: 1, mean log-prob −0\.350/);
  assert.match(await text(), /# lowest-confidence spans \(8 tokens each\):/);
  // The lowest first: the hesitation ("Wait, let me recheck").
  assert.match(await text(), /#   1\. " \. Wait , let me recheck : the"  mean log-prob −2\.19/);
  // Decorated tokens: background decorations drawn in the editor's overlay layer (the answer's
  // highlight is one more).
  const decorated = () => page.locator('.editor-instance .monaco-editor .view-overlays [class*="ced-"]').count();
  await retry(async () => assert.ok((await decorated()) > 3, `token backgrounds: ${await decorated()}`));
  await page.screenshot({ path: join(SHOTS, 'tokens-light.png') });
  await theme(page, 'Dark Modern');
  await retry(async () => assert.ok((await decorated()) > 3));
  await page.screenshot({ path: join(SHOTS, 'tokens-dark.png') });
  await theme(page, 'Light Modern');
  const shown = await decorated();
  await runCommand(page, 'Consensus Lens: Toggle Token Confidence');
  await retry(async () => assert.ok((await decorated()) <= 1, `hidden: ${await decorated()}`), { timeout: 10_000 });
  await runCommand(page, 'Consensus Lens: Toggle Token Confidence');
  await retry(async () => assert.equal(await decorated(), shown), { timeout: 10_000 });
  // Log-probs without the tokens' text, and only a mean: a line says what is missing.
  await revealPath(page, ['tokens-run', 'step 1', 'tok/1', 'roll-out 1']);
  await retry(async () => assert.match(await text(), /log-probs \(token_logprobs\) but not the tokens' text/));
  assert.match(await text(), /# per-position probability: [▁▂▃▄▅▆▇█]+/);
  await revealPath(page, ['tokens-run', 'step 1', 'tok/1', 'roll-out 2']);
  await retry(async () => assert.match(await text(), /only the mean log-prob \(−0\.120\) is logged/));
});

test('a log file opened as a run: the custom editor shows the run view', async () => {
  const { page } = ctx;
  await runCommand(page, 'View: Close All Editors');
  await runCommand(page, 'Consensus Lens: Open Log File as Run');
  await pick(page, 'compare-b/step_019.jsonl');
  const view = await webviewWith(page, '#series', { timeout: 60_000 });
  await retry(async () => assert.equal(await view.locator('#app').getAttribute('data-state'), 'ready'), { timeout: 120_000 });
  assert.equal(await view.locator('#app').getAttribute('data-runs'), '1');
  await view.locator('#chart-series-signal_groups').waitFor();
  await page.locator('.tabs-container .tab', { hasText: 'step_019.jsonl' }).first().waitFor({ timeout: 10_000 });
  await page.screenshot({ path: join(SHOTS, 'logfile-run-light.png') });
  await theme(page, 'Dark Modern', view);
  await page.screenshot({ path: join(SHOTS, 'logfile-run-dark.png') });
  await theme(page, 'Light Modern', view);
});

test('learning signal on the dashboard: the chart per operator and the accuracy definitions', async () => {
  const { page } = ctx;
  await runCommand(page, 'View: Close All Editors');
  await runCommand(page, 'Consensus Lens: Show Run Dashboard');
  const dash = await webviewWith(page, '#section-health', { timeout: 60_000 });
  const select = dash.locator('#run-select');
  await retry(async () => assert.ok((await select.locator('option', { hasText: 'compare-b' }).count()) > 0));
  await select.selectOption({ label: 'compare-b' });
  await dash.locator('#chart-health-signal').waitFor({ timeout: 120_000 });
  assert.equal(await dash.locator('#health-signal').getAttribute('data-configured'), 'majority');
  assert.match((await dash.locator('#accuracy-definitions').textContent()) ?? '', /Reward accuracy \(TTRL\)/);
  await dash.locator('#health-signal').evaluate((el) => el.scrollIntoView({ block: 'center' }));
  await page.screenshot({ path: join(SHOTS, 'signal-light.png') });
  await theme(page, 'Dark Modern', dash);
  await page.screenshot({ path: join(SHOTS, 'signal-dark.png') });
  await theme(page, 'Light Modern', dash);
});

test('token curves: the consensus panel draws each roll-out\u2019s probability by position and says what is missing', async () => {
  const { page } = ctx;
  await runCommand(page, 'View: Close All Editors');
  await runCommand(page, 'Consensus Lens: Show Consensus');
  await pick(page, 'tok/1');
  const panel = await webviewWith(page, '#rollout-table', { timeout: 60_000 });
  await retry(async () => assert.equal(await panel.locator('#app').getAttribute('data-question-id'), 'tok/1'), { timeout: 60_000 });
  // Roll-outs 0 (log-probs with text) and 1 (log-probs only) have a curve; 2 and 3 log only a mean.
  const curve = (i) => panel.locator(`#rollout-table tbody tr[data-index="${i}"] td[data-col="curve"] svg.sparkline`);
  await retry(async () => assert.equal(await panel.locator('#rollout-table svg.sparkline').count(), 2), { timeout: 30_000 });
  for (const i of [0, 1]) {
    assert.equal(await curve(i).getAttribute('data-points'), '48'); // 57 tokens in 48 buckets
    assert.ok((await curve(i).locator('polyline').count()) >= 1);
  }
  for (const i of [2, 3]) assert.equal(await curve(i).count(), 0);
  // The hesitation is roll-out 0's least confident stretch (its title says where, as text).
  assert.match((await curve(0).locator('title').textContent()) ?? '', /^57 tokens, probability by position \(48 buckets\); least confident around token (2[89]|3[0-6]) /);
  const note = (await panel.locator('#token-note').textContent()) ?? '';
  assert.match(note, /1 of 4 roll-outs: log-probs and text/);
  assert.match(note, /1 of 4 roll-outs: per-token log-probs \(token_logprobs\) without the tokens’ text — the curve shows them by position/);
  assert.match(note, /2 of 4 roll-outs: only the mean log-prob — no curve/);
  assert.match(note, /keep_token_logprobs=True/);
  // Sorting by the column puts the least confident roll-out first.
  await panel.locator('button.sort[data-col="curve"]').click();
  await panel.locator('button.sort[data-col="curve"]').click();
  await retry(async () => assert.equal(await panel.locator('#rollout-table tbody tr').first().getAttribute('data-index'), '0'));
  await panel.locator('#token-note').evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: join(SHOTS, 'token-curves-light.png') });
  await theme(page, 'Dark Modern', panel);
  // The workbench repaints after the webview under load: wait for its dark sidebar.
  await retry(async () => assert.notEqual(await page.locator('.sidebar').evaluate((el) => getComputedStyle(el).backgroundColor), 'rgb(255, 255, 255)'), { timeout: 10_000 });
  await page.waitForTimeout(1000);
  await page.screenshot({ path: join(SHOTS, 'token-curves-dark.png') });
  await theme(page, 'Light Modern', panel);
});

test('dashboard: Compare with… opens the runs side by side; the x axis aligns them by roll-outs seen', async () => {
  const { page } = ctx;
  await runCommand(page, 'View: Close All Editors');
  await runCommand(page, 'Consensus Lens: Show Run Dashboard');
  const dash = await webviewWith(page, '#compare-select', { timeout: 60_000 });
  const select = dash.locator('#run-select');
  await retry(async () => assert.ok((await select.locator('option', { hasText: 'compare-a' }).count()) > 0));
  await select.selectOption({ label: 'compare-a' });
  await retry(async () => assert.equal(await dash.locator('.stat[data-stat="groups"] .value').textContent(), '120'), { timeout: 120_000 });
  // The picker offers the other runs and this run under another operator, never the run itself.
  const offered = await dash.locator('#compare-select option').allTextContents();
  assert.equal(offered[0], 'Compare with…');
  assert.ok(offered.includes('compare-b') && !offered.includes('compare-a') && offered.includes('this run under another operator…'), offered.join(', '));
  await dash.locator('#compare-select').evaluate((el) => el.scrollIntoView({ block: 'center' }));
  await page.screenshot({ path: join(SHOTS, 'compare-with-picker-light.png') });
  await dash.locator('#compare-select').selectOption({ label: 'compare-b' });
  const view = await webviewWith(page, '#parting', { timeout: 60_000 });
  await retry(async () => assert.equal(await view.locator('#app').getAttribute('data-state'), 'ready'), { timeout: 120_000 });
  assert.equal(await view.locator('#app').getAttribute('data-runs'), '2');
  const stats = await view.locator('.side-stat .muted').allTextContents();
  assert.deepEqual(stats.map((s) => s.replace(/^[AB]: /, '')).map((s) => s.split(/[\\/]/).pop()), ['compare-a', 'compare-b']);
  // Aligned by step, then by roll-outs seen (both runs have 6 groups of 8 a step: 48 more each step).
  assert.equal(await view.locator('#series').getAttribute('data-align'), 'step');
  await view.locator('#align-by').selectOption('rollouts');
  await retry(async () => assert.equal(await view.locator('#series').getAttribute('data-align'), 'rollouts'));
  assert.match((await view.locator('#series h2').first().textContent()) ?? '', /aligned by roll-outs seen/);
  await view.locator('#chart-series-label_accuracy').waitFor();
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(SHOTS, 'compare-with-light.png') });
  await theme(page, 'Dark Modern', view);
  await page.screenshot({ path: join(SHOTS, 'compare-with-dark.png') });
  await theme(page, 'Light Modern', view);
});
