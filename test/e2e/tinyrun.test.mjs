// e2e of a real model's run in real VS Code (code-server + Chromium): examples/tiny-ttrl-run, written
// by experiments/tiny-ttrl (a small decoder trained here, then test-time RL with TRL's GRPOTrainer
// rewarded by consensus_lens.trl), opened with *Open Run…*: the explorer shows its steps as
// `report` counts them, and a roll-out's document shows the model's own token log-probs. The run
// is copied outside the workspace and opened in this window only (the suite's earlier windows keep
// their extension hosts alive, and each would load a run written into the workspace). The
// consensus panel opens on the run's first question where the vote, CISC and CoRE do not all pick
// the same answer, and the dashboard's accuracy per step is `report`'s.
// Screenshots (light) go to media/screenshots/.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { collapseUntilRows, launch, openWorkbench, runCommand, retry, webviewWith } from './lib.mjs';

const URL_ = process.env.E2E_URL;
const ROOT = process.env.E2E_ROOT;
const SHOTS = ROOT && join(ROOT, 'media/screenshots');
let ctx;
let runDir;

const run = (...args) => execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
const cli = (...args) => JSON.parse(run(...args));

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
  // Rows by their place in the tree (data-index): the list recycles its row elements, so their
  // order in the DOM is not the tree's once it has scrolled.
  let from = 0;
  for (let depth = 0; depth < path.length; depth++) {
    let dom = -1;
    await retry(async () => {
      const rows = await page.locator('.sidebar .monaco-list-row').evaluateAll((els) =>
        els
          .map((e, dom) => ({ dom, at: Number(e.getAttribute('data-index')), label: e.getAttribute('aria-label') ?? '', level: Number(e.getAttribute('aria-level')) }))
          .sort((a, b) => a.at - b.at),
      );
      const hit = rows.find((r) => r.at >= from && r.level === depth + 1 && (r.label === path[depth] || r.label.startsWith(path[depth] + ',')));
      // The tree renders only the rows in view (step 30 of 30 and its questions are below it):
      // scroll on (rows are found by their index in the tree, wherever the view is).
      if (!hit) {
        const box = await page.locator('.sidebar .monaco-list').first().boundingBox();
        await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
        await page.mouse.wheel(0, 240);
      }
      assert.ok(hit, `tree row "${path[depth]}" in ${JSON.stringify(rows.map((r) => r.label))}`);
      dom = hit.dom;
      from = hit.at;
    }, { timeout: 30_000 });
    const row = page.locator('.sidebar .monaco-list-row').nth(dom);
    if (depth === path.length - 1) await row.click();
    else if ((await row.getAttribute('aria-expanded')) === 'false') await row.locator('.monaco-tl-twistie').click();
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

test('tiny run: the consensus panel shows the first question where the vote, CISC and CoRE part', async () => {
  const { page } = ctx;
  const ops = ['majority', 'cisc', 'core'];
  const scores = run('score', runDir, '--no-cache').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  scores.sort((a, b) => a.step - b.step || a.question_id.localeCompare(b.question_id));
  const pick = scores.find((o) => new Set(ops.map((op) => o.results[op]?.label ?? null)).size > 1);
  assert.ok(pick, 'the run has a question where majority, CISC and CoRE do not all agree');
  await runCommand(page, 'View: Close All Editors');
  await revealPath(page, ['tiny-ttrl-run', `step ${pick.step}`, pick.question_id]);
  const wv = await webviewWith(page, '#label-strip', { timeout: 30_000 });
  await retry(async () => {
    const shown = await wv.locator('#app').evaluate((el) => ({ q: el.dataset.questionId, step: el.dataset.step, state: el.dataset.state }));
    assert.deepEqual(shown, { q: pick.question_id, step: String(pick.step), state: 'ready' });
  }, { timeout: 30_000 });
  // The strip shows each operator's label as `score` computes it, and they are not all one.
  const shownLabels = {};
  await retry(async () => {
    for (const op of ops) {
      shownLabels[op] = await wv.locator(`#label-strip .op[data-op="${op}"] .label`).getAttribute('data-value');
      assert.equal(shownLabels[op], pick.results[op].label ?? '', `${op} label`);
    }
  });
  assert.ok(new Set(Object.values(shownLabels)).size > 1, `labels in the panel: ${JSON.stringify(shownLabels)}`);
  // The header says whether CoRE overturns the vote, as `score`'s analysis does.
  const overturn = pick.results.core.label !== pick.results.majority.label;
  await wv.locator('#overturn', { hasText: overturn ? 'CoRE overturns the vote' : 'CoRE agrees with the vote' }).waitFor({ timeout: 10_000 });
  assert.equal(pick.analysis.overturn, overturn);
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(SHOTS, 'tiny-ttrl-panel-light.png') });
});

test('tiny run: the dashboard draws accuracy per operator over steps as report prints it', async () => {
  const { page } = ctx;
  // The dashboard opens on the consensus panel's run (the question the last test opened).
  await runCommand(page, 'Consensus Lens: Show Run Dashboard');
  const dash = await webviewWith(page, '#section-recovery', { timeout: 60_000 });
  await retry(async () => assert.equal(await dash.locator('#run-select option:checked').textContent(), 'tiny-ttrl-run'), { timeout: 30_000 });
  const rep = cli('report', runDir, '--json', '--no-cache');
  const groups = rep.steps.reduce((n, s) => n + s.groups, 0);
  await retry(async () => assert.equal(Number(await dash.locator('body').getAttribute('data-groups')), groups), { timeout: 60_000 });
  const titles = await dash.locator('body').evaluate(() => window.consensusLensDashboard.chartTitles());
  assert.match(titles.accuracy ?? '', /pseudo-label accuracy/);
  // Every step's accuracy per operator is `report`'s ("x% (n)").
  const table = run('report', runDir, '--no-cache').split('\n');
  const head = table[1].split(/\s{2,}/);
  const lines = table.slice(2).filter((l) => /^\d/.test(l));
  assert.equal(lines.length, rep.steps.length);
  let compared = 0;
  await retry(async () => {
    compared = 0;
    for (const line of lines) {
      const cells = line.split(/\s{2,}/);
      for (const [c, name] of head.entries()) {
        if (!name.startsWith('acc ') || cells[c] === '-') continue;
        const cell = dash.locator(`#accuracy-table tr[data-step="${cells[0]}"] td[data-op="${name.slice(4)}"]`);
        assert.equal(await cell.textContent(), cells[c], `step ${cells[0]} ${name}`);
        compared++;
      }
    }
    assert.ok(compared >= 3 * lines.length, `${compared} accuracy cells compared`);
  }, { timeout: 30_000 });
  await dash.locator('#chart-accuracy').scrollIntoViewIfNeeded();
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(SHOTS, 'tiny-ttrl-accuracy-light.png') });
});
