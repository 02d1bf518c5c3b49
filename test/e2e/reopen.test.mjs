// e2e of the persisted run index in real VS Code (code-server + Chromium): demo-run, scored in one
// window, is saved in the extension's global storage; a reloaded window (a new extension host)
// opens it from the saved index — its output says so, no log byte read — and the explorer shows
// exactly the same rows (run, steps, the first step's questions with regime, gate and marks).
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { launch, openWorkbench, runCommand, retry } from './lib.mjs';

const URL_ = process.env.E2E_URL;
const WORK = process.env.E2E_WORK;
let ctx;

function findFiles(dir, pred, out = []) {
  let names = [];
  try {
    names = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const d of names) {
    const p = join(dir, d.name);
    if (d.isDirectory()) findFiles(p, pred, out);
    else if (pred(p)) out.push(p);
  }
  return out;
}

const savedIndexes = () => findFiles(join(WORK, 'user-data'), (f) => /globalStorage\/.*consensus-lens.*\/indexes\/[0-9a-f]{64}\.cli$/i.test(f));

async function openExplorer(page) {
  const title = page.locator('.sidebar .composite.title', { hasText: /consensus lens/i });
  if (!(await title.count()) || !(await title.first().isVisible())) await page.locator('.activitybar [aria-label^="Consensus Lens"]').first().click();
  await title.first().waitFor({ timeout: 10_000 });
  await page.locator('.sidebar .monaco-list-row').first().waitFor({ timeout: 30_000 });
}

/** demo-run's rows once every question is scored: the run, its steps, its first step's questions. */
async function demoRows(page) {
  await openExplorer(page);
  const run = page.locator('.sidebar .monaco-list-row[aria-level="1"]', { hasText: 'demo-run' }).first();
  const rows = () => page.locator('.sidebar .monaco-list-row').evaluateAll((els) => els.map((e) => ({ label: e.getAttribute('aria-label') ?? '', level: Number(e.getAttribute('aria-level')), expanded: e.getAttribute('aria-expanded') })));
  // every run collapsed (the list renders only the rows in view), then demo-run and its first step expanded
  await retry(async () => {
    await page.locator('.sidebar .title-actions [aria-label="Collapse All"]').first().click({ timeout: 5_000 });
    await run.waitFor({ timeout: 3_000 });
  }, { timeout: 60_000 });
  await retry(async () => {
    const label = (await run.getAttribute('aria-label')) ?? '';
    assert.match(label, /demo-run, \d+ steps/);
    assert.doesNotMatch(label, /scoring|reading/);
  }, { timeout: 90_000 });
  const first = async () => {
    const all = await rows();
    return all.findIndex((r) => r.level === 1 && r.label.startsWith('demo-run'));
  };
  // expanded from the keyboard (a row selected, then →), until it is
  await retry(async () => {
    if ((await rows())[(await first()) + 1]?.level !== 2) {
      await run.click();
      await page.keyboard.press('ArrowRight');
    }
    assert.equal((await rows())[(await first()) + 1]?.level, 2);
  }, { timeout: 30_000 });
  await retry(async () => {
    if ((await rows())[(await first()) + 2]?.level !== 3) {
      await page.locator('.sidebar .monaco-list-row').nth((await first()) + 1).click();
      await page.keyboard.press('ArrowRight');
    }
    assert.equal((await rows())[(await first()) + 2]?.level, 3);
  }, { timeout: 30_000 });
  const all = await rows();
  const i = await first();
  const out = [all[i]];
  for (const r of all.slice(i + 1)) {
    if (r.level === 1) break;
    out.push({ label: r.label, level: r.level });
  }
  out[0] = { label: all[i].label, level: 1 };
  return out;
}

before(async () => {
  assert.ok(URL_, 'E2E_URL is not set: run this suite through run.mjs');
  ctx = await launch();
  await openWorkbench(ctx.page, URL_);
  await ctx.page.locator('.activitybar [aria-label^="Consensus Lens"]').first().click();
});

afterEach(async (t) => {
  const name = t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
  await ctx?.page.screenshot({ path: join(WORK, `reopen-end-${name}.png`) }).catch(() => {});
});

after(async () => {
  if (ctx) {
    assert.deepEqual(ctx.external, [], 'no network access beyond code-server');
    await ctx.browser.close();
  }
});

test('reopen: a reloaded window opens demo-run from its saved index and shows the same explorer', async () => {
  const { page } = ctx;
  const shown = await demoRows(page);
  assert.ok(shown.filter((r) => r.level === 3).length > 0, 'questions listed');
  assert.ok(shown.filter((r) => r.level === 3).every((r) => /gate/.test(r.label)), shown.map((r) => r.label).join('\n'));
  // the index is saved once the run is scored and quiet for 5 s (demo-run's: the file naming its logs)
  const demoIndex = () => savedIndexes().find((f) => readFileSync(f).includes('/demo-run/'));
  await retry(async () => assert.ok(demoIndex(), 'demo-run saved in the global storage'), { timeout: 60_000 });
  // Settled: its groups of roll-out records under their size completed by idleness (10 idle
  // periods after their last roll-out, ~5 s after the first save), scored and saved again (5 s
  // later): no change for 15 s. (8 s was shorter than that gap: the window was reloaded before its
  // last save, and the reloaded one completed those groups itself and rewrote the index.)
  const saved = demoIndex();
  let mtime = statSync(saved).mtimeMs;
  for (let quiet = 0, t = Date.now(); quiet < 15_000 && Date.now() - t < 120_000; ) {
    await page.waitForTimeout(1_000);
    const m = statSync(saved).mtimeMs;
    quiet = m === mtime ? quiet + 1_000 : 0;
    mtime = m;
  }
  // the explorer as saved: taken once settled (before that, later steps may still be scored)
  const before = await demoRows(page);

  await runCommand(page, 'Developer: Reload Window');
  await page.waitForTimeout(2_000);
  await openWorkbench(page, null);
  const afterRows = await demoRows(page);
  assert.deepEqual(afterRows, before);
  // the new host says it opened the run from its saved index, with no log byte read
  await retry(async () => {
    const logs = findFiles(join(WORK, 'user-data/logs'), (f) => /Consensus Lens\.log$/.test(f));
    const lines = logs.flatMap((f) => readFileSync(f, 'utf8').split('\n')).filter((l) => /demo-run: opened from its saved index/.test(l));
    assert.ok(lines.some((l) => /0 read again; 0 log bytes read/.test(l)), lines.join('\n') || `no such line in ${logs.length} output logs`);
  }, { timeout: 30_000 });
  // and, opened as saved, did not rewrite it
  await page.waitForTimeout(7_000);
  assert.equal(statSync(saved).mtimeMs, mtime, `${saved} not rewritten`);
});
