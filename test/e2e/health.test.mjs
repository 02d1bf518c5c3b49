// e2e of run health (docs/health.md) in real VS Code (code-server + Chromium), on health-run
// (fixtures/make-health-run.ts: the model stops boxing at step 10 while the logged reward becomes
// the format penalty; a quarter of the questions have an empty-box, repetition-collapsed
// plurality). The dashboard's health section shows the same alarms as `consensus-lens health`,
// marked on the series; a degenerate plurality opens from it in the panel with its marks; the
// status bar says the run has alarms. Screenshots go to media/screenshots/.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { collapseUntilRows, launch, openWorkbench, runCommand, retry } from './lib.mjs';

const URL_ = process.env.E2E_URL;
const ROOT = process.env.E2E_ROOT;
const WORKSPACE = process.env.E2E_WORKSPACE;
const RUN = WORKSPACE && join(WORKSPACE, 'health-run');
const SHOTS = ROOT && join(ROOT, 'media/screenshots');
let ctx;

async function frameWith(page, selector, timeout = 30_000) {
  return retry(async () => {
    const n = await page.locator('iframe.webview.ready').count();
    for (let i = 0; i < n; i++) {
      const f = page.frameLocator('iframe.webview.ready').nth(i).frameLocator('#active-frame');
      if (await f.locator(selector).count()) return f;
    }
    throw new Error(`no webview holds ${selector} (${n} webviews)`);
  }, { timeout });
}

before(async () => {
  assert.ok(URL_, 'E2E_URL is not set: run this suite through run.mjs');
  mkdirSync(SHOTS, { recursive: true });
  ctx = await launch();
  ctx.page.on('pageerror', (e) => console.log('[pageerror]', e.message));
  await openWorkbench(ctx.page, URL_);
  await ctx.page.locator('.activitybar [aria-label^="Consensus Lens"]').first().click();
  await collapseUntilRows(ctx.page, ['health-run']);
});

afterEach(async (t) => {
  const name = t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
  await ctx?.page.screenshot({ path: join(process.env.E2E_WORK, `health-end-${name}.png`) }).catch(() => {});
});

after(async () => {
  if (ctx) {
    assert.deepEqual(ctx.external, [], 'no network access beyond code-server');
    await ctx.browser.close();
  }
});

test('health: the dashboard marks the CLI\'s alarms on the timeline; a degenerate plurality opens in the panel with its marks; the status bar says so', async () => {
  const { page } = ctx;
  const cli = JSON.parse(execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'health', RUN, '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 }));
  const expected = cli.alarms.map((a) => a.message);
  assert.ok(expected.some((m) => /^unformatted share .* from step ≈ 10$/.test(m)), expected.join('; '));

  await runCommand(page, 'Consensus Lens: Show Run Dashboard');
  const dash = await frameWith(page, '#section-health', 60_000);
  const select = dash.locator('#run-select');
  await retry(async () => assert.ok((await select.locator('option', { hasText: 'health-run' }).count()) > 0));
  await select.selectOption({ label: 'health-run' });
  await retry(async () => assert.equal(Number(await dash.locator('#section-health .body').getAttribute('data-alarms')), expected.length), { timeout: 90_000 });
  // The same alarms, word for word, as the command line.
  const shown = await dash.locator('#health-alarms li.alarm[data-series]').evaluateAll((els) => els.map((e) => e.firstChild.textContent.replace(/^⚠ /, '')));
  assert.deepEqual(shown, expected);
  // The series chart of the alarm is drawn with its change point marked.
  const box = dash.locator('#health-series .health-series[data-series="unformatted_share"]');
  assert.equal(await box.getAttribute('data-alarm'), '10');
  await dash.locator('#chart-health-unformatted_share').waitFor();
  assert.equal(await dash.locator('#health-alarms li[data-bug="constant-penalty"]').count(), 1);
  // How many roll-outs (CoRE Fig. 2), from the same subsampling as the CLI.
  await dash.locator('#chart-health-whatif').waitFor();
  await dash.locator('#section-health').scrollIntoViewIfNeeded();
  await dash.locator('#section-health').evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: join(SHOTS, 'health-timeline.png') });

  // A degenerate plurality, one click away.
  const example = dash.locator('#health-alarms li[data-degenerate] button[data-question]').first();
  const q = await example.getAttribute('data-question');
  const step = await example.getAttribute('data-step');
  await example.click();
  const panel = await frameWith(page, '#degenerate-plurality', 60_000);
  await retry(async () => assert.deepEqual(await panel.locator('#app').evaluate((el) => ({ q: el.dataset.questionId, step: el.dataset.step })), { q, step }));
  assert.match(await panel.locator('#degenerate-plurality').textContent(), /degenerate plurality/);
  // Rows of the empty, repetition-collapsed roll-outs are marked, and CISC/CoRE pick another answer.
  assert.ok((await panel.locator('#rollout-table tbody tr.degenerate').count()) >= 4);
  assert.match(await panel.locator('#rollout-table tbody tr.degenerate td[data-col="flags"]').first().textContent(), /empty · repetitive/);
  assert.match(await panel.locator('#tau-auroc').textContent(), /confidence AUROC/);
  await page.screenshot({ path: join(SHOTS, 'panel-degenerate.png') });

  // The status bar names the run's alarms.
  await retry(async () => assert.match(await page.locator('.statusbar-item', { hasText: 'health-run' }).first().textContent(), /alarm/), { timeout: 30_000 });
});
