// e2e of the run-wide what-ifs and the run dashboard in real VS Code (code-server +
// Chromium). Started by run.mjs after suite.test.mjs, against the same code-server, whose
// extension host runs with CONSENSUS_LENS_TEST_WHATIF_DELAY_MS so a re-score of the small demo
// run lasts long enough to be cancelled by a click. Scenarios: re-score the demo run with κ = 0.5
// against the vote, cancel once midway (the previous result stays), run it fully (flips as the CLI
// predicts), open a flipped question from the result; the dashboard's recovery plot → a question;
// the panel's sensitivity intervals; the extension host's event loop while a run of degenerate
// roll-outs loads. Screenshots go to media/screenshots/.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { collapseUntilRows, launch, openWorkbench, runCommand, retry } from './lib.mjs';

const URL_ = process.env.E2E_URL;
const ROOT = process.env.E2E_ROOT;
const WORKSPACE = process.env.E2E_WORKSPACE;
const DEMO = WORKSPACE && join(WORKSPACE, 'demo-run');
const SHOTS = ROOT && join(ROOT, 'media/screenshots');
let ctx;

/** The CLI's labels for a run: step|question → {majority, core}. */
function cliLabels(path, extra = []) {
  const out = execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'score', path, '--operators', 'majority,core', ...extra], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const m = new Map();
  for (const line of out.trim().split('\n')) {
    const o = JSON.parse(line);
    m.set(`${o.step}|${o.question_id}`, { step: o.step, q: o.question_id, majority: o.results.majority.label, core: o.results.core.label });
  }
  return m;
}

/** The webview (inner frame) that holds `selector`: the consensus panel and the dashboard can both be open. */
async function frameWith(page, selector, timeout = 30_000) {
  return retry(async () => {
    const outer = page.locator('iframe.webview.ready');
    const n = await outer.count();
    for (let i = 0; i < n; i++) {
      const f = page.frameLocator('iframe.webview.ready').nth(i).frameLocator('#active-frame');
      if (await f.locator(selector).count()) return f;
    }
    throw new Error(`no webview holds ${selector} (${n} webviews)`);
  }, { timeout });
}

async function shownQuestion(page) {
  const wv = await frameWith(page, '#rollout-table');
  return wv.locator('#app').evaluate((el) => ({ q: el.dataset.questionId, step: el.dataset.step }));
}

const toast = (page, text) => page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();

async function clearNotifications(page) {
  await runCommand(page, 'Notifications: Clear All Notifications').catch(() => {});
  await page.keyboard.press('Escape');
}

/** Runs Re-score Run… on demo-run with `text` typed over the prefilled input. */
async function startRescore(page, text) {
  await runCommand(page, 'Consensus Lens: Re-score Run…');
  const pick = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'demo-run' }).first();
  await pick.waitFor({ timeout: 15_000 });
  await pick.click();
  const input = page.locator('.quick-input-widget input[type="text"]');
  await input.waitFor({ state: 'visible' });
  // The input is prefilled with the configured values ("core kappa=0.1 … vs majority"), selected.
  await retry(async () => assert.match(await input.inputValue(), /^core kappa=0\.1 .*vs majority$/));
  await input.press('Control+a');
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

before(async () => {
  assert.ok(URL_, 'E2E_URL is not set: run this suite through run.mjs');
  mkdirSync(SHOTS, { recursive: true });
  ctx = await launch();
  ctx.page.on('pageerror', (e) => console.log('[pageerror]', e.message));
  await openWorkbench(ctx.page, URL_);
  // The run explorer reads the workspace's runs.
  await ctx.page.locator('.activitybar [aria-label^="Consensus Lens"]').first().click();
  await ctx.page.locator('.sidebar .monaco-list-row', { hasText: 'demo-run' }).first().waitFor({ timeout: 60_000 });
});

afterEach(async (t) => {
  const name = t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
  await ctx?.page.screenshot({ path: join(process.env.E2E_WORK, `whatif-end-${name}.png`) }).catch(() => {});
});

after(async () => {
  if (ctx) {
    assert.deepEqual(ctx.external, [], 'no network access beyond code-server');
    await ctx.browser.close();
  }
});

test('re-score the demo run with κ = 0.5: cancel midway keeps the previous result; the full run flips as the CLI says; a flip opens its question', async () => {
  const { page } = ctx;
  const base = cliLabels(DEMO);
  const at1 = cliLabels(DEMO, ['--kappa', '1']);
  const at05 = cliLabels(DEMO, ['--kappa', '0.5']);
  const flips1 = [...at1.values()].filter((o) => o.core !== base.get(`${o.step}|${o.q}`).majority);
  const flips05 = [...at05.values()].filter((o) => o.core !== base.get(`${o.step}|${o.q}`).majority);
  assert.ok(flips05.length > 0, 'CoRE at κ = 0.5 overturns some votes of the demo run');

  // 1. A previous result: κ = 1 against the vote, run fully. This window reopened the demo run
  // from its saved index; a group under the run's usual size (16 roll-outs of 64) saved before it
  // completed waits the followed run's under-size time (10 × idle) before it counts, and a re-score
  // covers complete groups only: re-scored until it covers the CLI's groups.
  await retry(async () => {
    await clearNotifications(page);
    await startRescore(page, 'core kappa=1 vs majority');
    await toast(page, 'pseudo-labels flip').waitFor({ timeout: 60_000 });
    assert.match(await toast(page, 'pseudo-labels flip').innerText(), new RegExp(`${flips1.length} of ${base.size} pseudo-labels flip under core \\(vs majority\\)`));
  }, { timeout: 60_000, interval: 2000 });
  await clearNotifications(page);

  // 2. κ = 0.5, cancelled once midway from the progress notification.
  await startRescore(page, 'core kappa=0.5 vs majority');
  const progress = toast(page, 'Re-scoring demo-run');
  await progress.waitFor({ timeout: 30_000 });
  await retry(async () => {
    const m = /(\d+)\/(\d+) groups/.exec(await progress.innerText());
    assert.ok(m && Number(m[1]) > 0 && Number(m[1]) < Number(m[2]), `midway: ${m?.[0]}`);
  }, { timeout: 30_000, interval: 50 });
  await progress.locator('.monaco-button, a.monaco-button', { hasText: 'Cancel' }).first().click();
  const cancelled = toast(page, 're-score cancelled');
  await cancelled.waitFor({ timeout: 30_000 });
  assert.match(await cancelled.innerText(), /the previous result is kept/);
  await clearNotifications(page);
  // The previous (κ = 1) result is intact: its flips are listed.
  await runCommand(page, 'Consensus Lens: Show Pseudo-label Flips of the Last Re-score');
  if (flips1.length) {
    await retry(async () => assert.match(await page.locator('.quick-input-widget').innerText(), /"kappa":1\b/));
    await retry(async () => assert.equal(await page.locator('.quick-input-widget .monaco-list-row').count(), flips1.length));
  } else {
    await toast(page, 'no pseudo-label flips').waitFor({ timeout: 10_000 });
  }
  await page.keyboard.press('Escape');
  await clearNotifications(page);

  // 3. κ = 0.5 run fully: the flips the CLI predicts.
  await startRescore(page, 'core kappa=0.5 vs majority');
  const done = toast(page, 'pseudo-labels flip');
  await done.waitFor({ timeout: 60_000 });
  assert.match(await done.innerText(), new RegExp(`${flips05.length} of ${base.size} pseudo-labels flip under core \\(vs majority\\)`));
  await page.screenshot({ path: join(SHOTS, 'rescore-result.png') });

  // 4. Show Flips → pick one → its consensus panel.
  await done.locator('.monaco-button', { hasText: 'Show Flips' }).first().click();
  const rows = page.locator('.quick-input-widget .monaco-list-row');
  await rows.first().waitFor({ timeout: 10_000 });
  await retry(async () => assert.equal(await rows.count(), flips05.length));
  const first = flips05[0];
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: first.q }).first().click();
  await retry(async () => assert.deepEqual(await shownQuestion(page), { q: first.q, step: String(first.step) }), { timeout: 30_000 });
});

test('panel: the κ and τ intervals over which the CoRE label holds', async () => {
  const { page } = ctx;
  const wv = await frameWith(page, '#rollout-table');
  const kappa = wv.locator('#sensitivity-kappa');
  await kappa.waitFor({ timeout: 30_000 });
  const lo = Number(await kappa.getAttribute('data-lo'));
  const hi = Number(await kappa.getAttribute('data-hi'));
  assert.ok(lo <= 0.1 + 1e-12 && 0.1 <= hi + 1e-12, `κ = 0.1 in [${lo}, ${hi}]`);
  assert.ok(await wv.locator('#sensitivity-tau').count());
  await wv.locator('#sensitivity').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, 'panel-sensitivity.png') });
});

test('dashboard: charts of the run; a click on a recovery-plot point opens its question', async () => {
  const { page } = ctx;
  await runCommand(page, 'Consensus Lens: Show Run Dashboard');
  const dash = await frameWith(page, '#section-recovery', 60_000);
  // It opens on the consensus panel's run (demo-run); the run picker says so.
  await retry(async () => assert.equal(await dash.locator('#run-select option:checked').textContent(), 'demo-run'));
  await retry(async () => assert.ok(Number(await dash.locator('body').getAttribute('data-groups')) > 0), { timeout: 60_000 });
  await dash.locator('#chart-gate').waitFor();
  // The last re-score (κ = 0.5) is shown with its flips.
  await retry(async () => assert.ok(Number(await dash.locator('#whatif-summary').getAttribute('data-flips')) > 0));
  await dash.locator('#agreement-table').waitFor();
  // Chart titles are drawn (Chart.js's Title plugin is registered).
  const titles = await dash.locator('body').evaluate(() => window.consensusLensDashboard.chartTitles());
  assert.equal(titles.gate, 'mean CoRE gate and majority ratio');
  assert.match(titles.accuracy ?? '', /pseudo-label accuracy/);
  // Accuracy per step as `report` prints it: "x% (n)" over the questions each operator ran on
  // (T3RL and MS-TTRL only where verifications and outcome checks are logged).
  const report = execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'report', DEMO], { encoding: 'utf8' }).split('\n');
  const head = report[1].split(/\s{2,}/);
  let compared = 0;
  await retry(async () => {
    compared = 0;
    for (const line of report.slice(2).filter((l) => /^\d/.test(l))) {
      const cells = line.split(/\s{2,}/);
      for (const [c, name] of head.entries()) {
        if (!name.startsWith('acc ') || cells[c] === '-') continue;
        const cell = dash.locator(`#accuracy-table tr[data-step="${cells[0]}"] td[data-op="${name.slice(4)}"]`);
        assert.equal(await cell.textContent(), cells[c], `step ${cells[0]} ${name}`);
        compared++;
      }
    }
    assert.ok(compared >= 6, `${compared} accuracy cells compared`);
  }, { timeout: 30_000 });
  await page.screenshot({ path: join(SHOTS, 'dashboard-light.png') });
  await dash.locator('#section-whatif').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, 'dashboard-whatif.png') });
  // A flip in the dashboard's table is one click from its question too.
  assert.ok(await dash.locator('#flip-table button[data-question]').count() > 0);
  // Sweep: run the 6 × 6 grid and wait for the heatmap.
  await dash.locator('#run-sweep').click();
  await dash.locator('#sweep-table td[data-kappa]').first().waitFor({ timeout: 120_000 });
  assert.equal(await dash.locator('#sweep-table td[data-kappa]').count(), 36);
  // Click a point of the recovery plot.
  const canvas = dash.locator('#chart-recovery');
  await canvas.scrollIntoViewIfNeeded();
  const point = await retry(async () => {
    const p = await dash.locator('body').evaluate(() => {
      const api = window.consensusLensDashboard;
      if (!api || api.recoveryCount() === 0) return null;
      const pt = api.recoveryPoint(0);
      const r = document.getElementById('chart-recovery').getBoundingClientRect();
      return pt && { x: pt.x - r.left, y: pt.y - r.top, questionId: pt.questionId, step: pt.step };
    });
    assert.ok(p, 'a recovery point is drawn');
    return p;
  });
  // Every bar is drawn inside the plot: the axis fits the confidence-lowered bars below 1/3.
  const bars = await dash.locator('body').evaluate(() => window.consensusLensDashboard.recoveryBars());
  assert.ok(bars.length > 0);
  assert.deepEqual(bars.filter((b) => !b.inside), [], 'bars outside the plot');
  // (Bars under 10⁻³ are arrows at the bottom edge; the demo run has one at 5.8·10⁻⁴.)
  const low = bars.filter((b) => b.kind === 'confidence' && b.value < 0.33 && b.value >= 1e-3);
  assert.ok(low.length > 0 && low.every((b) => b.axisMin <= b.value), JSON.stringify(low.slice(0, 3)));
  await page.screenshot({ path: join(SHOTS, 'dashboard-recovery.png') });
  await canvas.click({ position: { x: point.x, y: point.y } });
  await retry(async () => assert.deepEqual(await shownQuestion(page), { q: point.questionId, step: String(point.step) }), { timeout: 30_000 });
});

/** The "extension host event-loop lag" lines the extension wrote to its output, oldest first. */
function lagReports() {
  const files = [];
  const walk = (dir) => {
    let names = [];
    try {
      names = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const d of names) {
      const p = join(dir, d.name);
      if (d.isDirectory()) walk(p);
      else if (p.endsWith('Consensus Lens.log')) files.push(p);
    }
  };
  walk(join(process.env.E2E_WORK, 'user-data/logs'));
  const out = [];
  for (const f of files) {
    for (const m of readFileSync(f, 'utf8').matchAll(/event-loop lag: max ([\d.]+) ms, mean ([\d.]+) ms over ([\d.]+) s; (\d+) questions summarised/g)) {
      out.push({ max: Number(m[1]), mean: Number(m[2]), seconds: Number(m[3]), summarised: Number(m[4]) });
    }
  }
  return out;
}

test('host: a run of degenerate roll-outs (an answer, then 60 KB of filler) loads without blocking the extension host event loop (under 50 ms beyond idle)', async () => {
  const { page } = ctx;
  // Each call of the command waits for the background work, reports the largest event-loop
  // delay since the previous call and resets it: the largest of consecutive reports is the
  // largest over the whole load.
  // The command runs from its key (run.mjs binds it), not the command palette: typing a title into
  // the palette keeps the renderer busy for over a second, competing with the host for the CPU.
  const report = async () => {
    const before = lagReports().length;
    const latest = (timeout) => retry(() => {
      const all = lagReports();
      assert.ok(all.length > before, 'no new lag report yet');
      return all[all.length - 1];
    }, { timeout, interval: 250 });
    await page.evaluate(() => document.activeElement instanceof HTMLElement && document.activeElement.tagName === 'IFRAME' && document.activeElement.blur());
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+Alt+Shift+F12');
    try {
      return await latest(60_000);
    } catch {
      // the key did not reach the workbench: the palette then
      await runCommand(page, 'Consensus Lens: Show Extension Host Event-Loop Lag');
      return latest(60_000);
    }
  };
  // The run is a log file outside the workspace, opened in this window (Open Run…), so that only
  // this window's extension host loads it: code-server keeps the extension hosts of the suite's
  // earlier windows alive for minutes after their pages closed, and each follows the workspace's
  // runs — a run written into the workspace was loaded by three hosts at once, on two cores.
  const file = join(process.env.E2E_WORK, 'degenerate-run', 'degenerate.jsonl');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, '');
  await runCommand(page, 'Consensus Lens: Open Run…');
  // code-server's open dialog is a quick input holding a path.
  const input = page.locator('.quick-input-widget input[type="text"]');
  await input.waitFor({ state: 'visible' });
  await retry(async () => assert.match(await input.inputValue(), /\//));
  await retry(async () => {
    await input.fill(file);
    await page.waitForTimeout(200);
    assert.equal(await input.inputValue(), file);
  });
  await input.press('Enter');
  await collapseUntilRows(page, ['degenerate.jsonl'], { timeout: 30_000 });
  await report(); // resets: from here on, only what follows counts
  // The machine's own noise (a loaded CI box delays every thread): the lag of the idle window
  // over a few seconds, measured the same way, just before the load.
  await page.waitForTimeout(4000);
  const start = await report();
  // Collapsed RL models write exactly this: "the answer is 4" and then a long run of one character.
  const FILLERS = [' ', '!', '…', '$', '。', '.', '\\', '}'];
  const groups = Array.from({ length: 6 }, (_, q) => JSON.stringify({
    kind: 'group', step: 1, question_id: `degenerate/${q}`,
    rollouts: Array.from({ length: 8 }, (_, i) => {
      const f = FILLERS[(q + i) % FILLERS.length];
      const a = i % 3 ? 4 : 5;
      return { response: (i % 2 ? `the answer is ${a}` : `so the answer is \\boxed{${a}}`) + f.repeat(Math.floor(60_000 / f.length)), mean_logprob: -0.1 - 0.01 * i };
    }),
  }));
  writeFileSync(file, groups.join('\n') + '\n');
  const reports = [];
  await retry(async () => {
    reports.push(await report());
    assert.ok(reports[reports.length - 1].summarised >= start.summarised + 6, `summarised ${reports[reports.length - 1].summarised}, waiting for ${start.summarised + 6}`);
  }, { timeout: 180_000, interval: 500 });
  const max = Math.max(...reports.map((r) => r.max));
  console.log(`extension host event-loop lag (ms): idle ${start.max} (over ${start.seconds} s); while a degenerate run loads ${JSON.stringify(reports.map((r) => r.max))}`);
  // The target, under 50 ms beyond what the idle host already sees, is read off this figure on a
  // quiet machine (BENCHMARKS.md); a loaded CI box stretches every timer. The assertion catches the
  // fault itself: with the groups prepared on the host the loop was blocked for ~1 s.
  assert.ok(max < 500 + start.max, `the extension host's event loop was blocked for ${max} ms (idle: ${start.max} ms)`);
});
