// The Consensus Lens e2e suite: real VS Code (code-server) + Chromium. Started by run.mjs, which
// provides E2E_URL and the work folders. The tests share one browser page and run in order.
import { test, before, after, afterEach } from 'node:test';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { launch, openWorkbench, runCommand, webview, retry } from './lib.mjs';

const URL_ = process.env.E2E_URL;
let ctx;

before(async () => {
  assert.ok(URL_, 'E2E_URL is not set: run this suite through run.mjs');
  ctx = await launch();
  ctx.page.on('pageerror', (e) => console.log('[pageerror]', e.message));
  await openWorkbench(ctx.page, URL_);
});

afterEach(async (t) => {
  // Keep a picture of every test's end state (failures are the interesting ones).
  const name = t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
  await ctx?.page.screenshot({ path: join(process.env.E2E_WORK, `end-${name}.png`) }).catch(() => {});
});

after(async () => {
  await ctx?.browser.close();
});

test('smoke: workbench loads, the extension activates, the panel opens', async () => {
  const { page } = ctx;
  await runCommand(page, 'Consensus Lens: Show Consensus');
  const wv = webview(page);
  await retry(async () => assert.ok(await wv.locator('#app').count() > 0), { timeout: 30_000 });
  assert.equal(await page.locator('.activitybar [aria-label^="Consensus Lens"]').count() > 0, true);
});
