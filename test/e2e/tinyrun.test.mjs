// e2e of a real model's run in real VS Code (code-server + Chromium): examples/tiny-ttrl-run, written
// by experiments/tiny-ttrl (a small decoder trained here, then test-time RL with TRL's GRPOTrainer
// rewarded by consensus_lens.trl), opened with *Open Run…*: the explorer shows its steps as
// `report` counts them, and a roll-out's document shows the model's own token log-probs. The run
// is copied outside the workspace and opened in this window only (the suite's earlier windows keep
// their extension hosts alive, and each would load a run written into the workspace).
// Screenshots (light) go to media/screenshots/.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { collapseUntilRows, launch, openWorkbench, runCommand, retry } from './lib.mjs';

const URL_ = process.env.E2E_URL;
const ROOT = process.env.E2E_ROOT;
const SHOTS = ROOT && join(ROOT, 'media/screenshots');
let ctx;
let runDir;

const cli = (...args) => JSON.parse(execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], { encoding: 'utf8', maxBuffer: 64 << 20 }));

/** The example's roll-out records of one step, as logged. */
function rollouts(step) {
  const f = readdirSync(runDir).find((n) => n === `step_${String(step).padStart(6, '0')}.rank0.jsonl`);
  return readFileSync(join(runDir, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** Reveals [run, 'step N', question, 'roll-out i'] in the explorer and clicks the last row. */
async function revealPath(page, path) {
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
  runDir = join(process.env.E2E_WORK, 'tiny', 'tiny-ttrl-run');
  cpSync(join(ROOT, 'examples/tiny-ttrl-run'), runDir, { recursive: true });
  ctx = await launch();
  ctx.page.on('pageerror', (e) => console.log('[pageerror]', e.message));
  await openWorkbench(ctx.page, URL_);
  await ctx.page.locator('.activitybar [aria-label^="Consensus Lens"]').first().click();
  await runCommand(ctx.page, 'Consensus Lens: Open Run…');
  const input = ctx.page.locator('.quick-input-widget input[type="text"]');
  await input.waitFor({ state: 'visible' });
  await retry(async () => assert.match(await input.inputValue(), /\//));
  await retry(async () => {
    await input.fill(runDir);
    await ctx.page.waitForTimeout(200);
    assert.equal(await input.inputValue(), runDir);
  });
  await input.press('Enter');
  // code-server's folder dialog may ask to confirm the folder itself.
  const ok = ctx.page.locator('.quick-input-widget .quick-input-action a, .quick-input-widget .monaco-button', { hasText: /^OK$/ });
  if (await ok.count().catch(() => 0)) await ok.first().click().catch(() => undefined);
  await collapseUntilRows(ctx.page, ['tiny-ttrl-run'], { timeout: 90_000 });
});

afterEach(async (t) => {
  const name = t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
  await ctx?.page.screenshot({ path: join(process.env.E2E_WORK, `tiny-end-${name}.png`) }).catch(() => {});
});

after(async () => {
  if (ctx) {
    assert.deepEqual(ctx.external, [], 'no network access beyond code-server');
    await ctx.browser.close();
  }
});

test('tiny run: the explorer lists the steps report counts', async () => {
  const { page } = ctx;
  const rep = cli('report', runDir, '--json', '--no-cache');
  const steps = rep.steps.length;
  assert.ok(steps > 1);
  await retry(async () => {
    const label = await page.locator('.sidebar .monaco-list-row', { hasText: 'tiny-ttrl-run' }).first().getAttribute('aria-label');
    assert.match(label ?? '', new RegExp(`tiny-ttrl-run, ${steps} steps`));
  }, { timeout: 90_000 });
});

test('tiny run: a roll-out shows the model\u2019s own token log-probs on its text', async () => {
  const { page } = ctx;
  const first = rollouts(1).find((r) => r.sample_idx === 0);
  await runCommand(page, 'View: Close All Editors');
  await revealPath(page, ['tiny-ttrl-run', 'step 1', first.question_id, 'roll-out 0']);
  await page.locator('.tabs-container .tab', { hasText: /roll-out \d+/ }).first().waitFor({ timeout: 20_000 });
  const text = async () => (await page.locator('.editor-instance .monaco-editor .view-lines').last().innerText()).replace(/\u00a0/g, ' ').replace(/\n/g, '');
  // The document names the roll-out it shows; its token count is the logged one's.
  let shown;
  await retry(async () => {
    const m = /roll-out \d+ \(sample_idx (\d+)\) of 16.*question: (q\d+)/.exec(await text());
    assert.ok(m, await text());
    shown = rollouts(1).find((r) => r.sample_idx === Number(m[1]) && r.question_id === m[2]);
    assert.ok(shown);
    assert.match(await text(), new RegExp(`# token confidence: ${shown.token_logprobs.length} tokens, mean log-prob`));
  }, { timeout: 30_000 });
  assert.match(await text(), /# ground truth \(diagnostic only\): /);
  const decorated = () => page.locator('.editor-instance .monaco-editor .view-overlays [class*="ced-"]').count();
  await retry(async () => assert.ok((await decorated()) > 3, `token backgrounds: ${await decorated()}`));
  await page.screenshot({ path: join(SHOTS, 'tiny-ttrl-tokens-light.png') });
});
