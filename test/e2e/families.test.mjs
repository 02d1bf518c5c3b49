// e2e of consensus against confidence in real VS Code (code-server + Chromium), on
// fixtures/family-run (native JSON lines whose roll-outs log `self_certainty`, `entropy`,
// `token_entropies` and `token_logprobs`): the consensus panel shows each roll-out's reward and
// advantage under a consensus operator and a confidence reward side by side, as
// `consensus-lens score` computes them, with the roll-outs they push in opposite directions
// marked; the dashboard's family rows show, per step, each family's accuracy and learning-signal
// share and their agreement, as recomputed here from `score`. Screenshots (light and dark) go to
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
const CONFIDENCE = ['selfcertainty', 'entropy', 'likelihood'];
const CONSENSUS = ['majority', 'cisc', 'ec', 'core', 't3rl', 'msttrl', 'empo', 'novelty'];
let ctx;

/** `consensus-lens score` on the fixture: one object per group. */
function score() {
  const out = execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'score', join(WORKSPACE, 'family-run'), '--no-cache', '--jobs', '0'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  return out
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

const opposite = (a, b) => Math.abs(a) > 1e-12 && Math.abs(b) > 1e-12 && a > 0 !== b > 0;
const close = (x, y, what) => assert.ok(Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(y)), `${what}: ${x} ≠ ${y}`);

async function pick(page, text) {
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

before(async () => {
  assert.ok(URL_, 'E2E_URL is not set: run this suite through run.mjs');
  mkdirSync(SHOTS, { recursive: true });
  ctx = await launch();
  ctx.page.on('pageerror', (e) => console.log('[pageerror]', e.message));
  await openWorkbench(ctx.page, URL_);
  await ctx.page.locator('.activitybar [aria-label^="Consensus Lens"]').first().click();
  await collapseUntilRows(ctx.page, ['family-run'], { timeout: 90_000 });
});

afterEach(async (t) => {
  const name = t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
  await ctx?.page.screenshot({ path: join(process.env.E2E_WORK, `families-end-${name}.png`) }).catch(() => {});
});

after(async () => {
  if (ctx) {
    assert.deepEqual(ctx.external, [], 'no network access beyond code-server');
    await ctx.browser.close();
  }
});

test('consensus vs confidence: each roll-out’s reward and advantage under both as the CLI scores them, opposite signs marked', async () => {
  const { page } = ctx;
  const groups = score();
  await runCommand(page, 'View: Close All Editors');
  await runCommand(page, 'Consensus Lens: Show Consensus');
  await pick(page, 'fam/1');
  const panel = await webviewWith(page, '#family-compare', { timeout: 60_000 });
  await retry(async () => assert.equal(await panel.locator('#app').getAttribute('data-question-id'), 'fam/1'), { timeout: 60_000 });
  const step = Number(await panel.locator('#app').getAttribute('data-step'));
  const g = groups.find((x) => x.step === step && x.question_id === 'fam/1');
  assert.ok(g, `score has fam/1 at step ${step}`);
  const ran = CONFIDENCE.filter((o) => g.results[o]);
  assert.ok(ran.length > 0, `score runs a confidence reward on the fixture (unavailable: ${JSON.stringify(g.unavailable)})`);
  // The panel offers exactly the confidence rewards the CLI could run.
  await retry(async () => assert.deepEqual(await panel.locator('#family-pick-confidence option').evaluateAll((os) => os.map((o) => o.value)), ran), { timeout: 30_000 });
  const consensusRan = CONSENSUS.filter((o) => g.results[o]);
  assert.deepEqual(await panel.locator('#family-pick-consensus option').evaluateAll((os) => os.map((o) => o.value)), consensusRan);

  for (const [c, f] of [
    ['majority', ran[0]],
    ['core', ran[ran.length - 1]],
  ]) {
    await panel.locator('#family-pick-consensus').selectOption(c);
    await panel.locator('#family-pick-confidence').selectOption(f);
    const table = panel.locator('#family-compare-table');
    await retry(async () => {
      assert.equal(await table.getAttribute('data-consensus'), c);
      assert.equal(await table.getAttribute('data-confidence'), f);
    });
    const cell = async (i, col) => Number(await table.locator(`tbody tr[data-index="${i}"] td[data-col="${col}"]`).getAttribute('data-value'));
    let apart = 0;
    for (let i = 0; i < g.n; i++) {
      close(await cell(i, 'reward-consensus'), g.results[c].rewards[i], `${c} reward of roll-out ${i}`);
      close(await cell(i, 'advantage-consensus'), g.results[c].advantages[i], `${c} advantage of roll-out ${i}`);
      close(await cell(i, 'reward-confidence'), g.results[f].rewards[i], `${f} reward of roll-out ${i}`);
      close(await cell(i, 'advantage-confidence'), g.results[f].advantages[i], `${f} advantage of roll-out ${i}`);
      const expected = opposite(g.results[c].advantages[i], g.results[f].advantages[i]);
      if (expected) apart++;
      const tr = table.locator(`tbody tr[data-index="${i}"]`);
      assert.equal(await tr.getAttribute('data-disagree'), String(expected), `roll-out ${i} marked ${expected ? '' : 'not '}apart`);
      assert.equal((await tr.locator('td[data-col="sign"]').textContent())?.includes('⇅'), expected);
    }
    assert.equal(Number(await panel.locator('#family-disagree-count').getAttribute('data-count')), apart);
    // fam/1: the vote is right, the model surest of the wrong minority (fixtures/family-run).
    if (c === 'majority') assert.ok(apart > 0, 'the vote and the confidence reward push some roll-out apart on fam/1');
  }
  await panel.locator('#family-pick-consensus').selectOption('majority');
  await panel.locator('#family-pick-confidence').selectOption(ran[0]);
  await panel.locator('#family-compare').evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: join(SHOTS, 'family-compare-light.png') });
  await theme(page, 'Dark Modern', panel);
  await panel.locator('#family-compare').evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: join(SHOTS, 'family-compare-dark.png') });
  await theme(page, 'Light Modern', panel);
});

test('dashboard family rows: per step each family’s accuracy and learning signal, and their agreement, as recomputed from score', async () => {
  const { page } = ctx;
  const groups = score();
  await runCommand(page, 'View: Close All Editors');
  await runCommand(page, 'Consensus Lens: Show Run Dashboard');
  const dash = await webviewWith(page, '#section-families', { timeout: 60_000 });
  const select = dash.locator('#run-select');
  await retry(async () => assert.ok((await select.locator('option', { hasText: 'family-run' }).count()) > 0));
  await select.selectOption({ label: 'family-run' });
  const table = dash.locator('#family-table');
  await table.waitFor({ timeout: 120_000 });
  await retry(async () => assert.equal(await dash.locator('body').getAttribute('data-groups'), String(groups.length)), { timeout: 60_000 });
  const ran = CONFIDENCE.filter((o) => groups.some((g) => g.results[o]));
  assert.ok(ran.length > 0);
  const f = ran[ran.length - 1];
  await dash.locator('#family-consensus').selectOption('majority');
  await dash.locator('#family-confidence').selectOption(f);
  await retry(async () => assert.equal(await dash.locator('#family-table').getAttribute('data-confidence'), f));
  const steps = [...new Set(groups.map((g) => g.step))].sort((a, b) => a - b);
  const truth = { 'fam/1': '56', 'fam/2': '42', 'fam/3': '81' };
  const signal = (r) => r.advantages.some((a) => Math.abs(a * (r.loss_weight ?? 1)) > 1e-9);
  for (const s of steps) {
    const gs = groups.filter((g) => g.step === s);
    const share = (pred, op) => {
      const on = gs.filter((g) => g.results[op]);
      return on.filter((g) => pred(g, g.results[op])).length / on.length;
    };
    const expected = {
      'consensus-accuracy': share((g, r) => r.label === truth[g.question_id], 'majority'),
      'consensus-signal': share((_g, r) => signal(r), 'majority'),
      'confidence-accuracy': share((g, r) => r.label === truth[g.question_id], f),
      'confidence-signal': share((_g, r) => signal(r), f),
      'both-agreement': gs.filter((g) => g.results.majority && g.results[f]).filter((g) => g.results.majority.label === g.results[f].label).length / gs.filter((g) => g.results.majority && g.results[f]).length,
    };
    for (const [row, value] of Object.entries(expected)) {
      const td = dash.locator(`#family-row-${row} td[data-step="${s}"]`);
      close(Number(await td.getAttribute('data-value')), value, `${row} at step ${s}`);
    }
  }
  assert.equal(await dash.locator('#family-row-consensus-signal').getAttribute('data-op'), 'majority');
  assert.equal(await dash.locator('#family-row-confidence-signal').getAttribute('data-op'), f);
  await dash.locator('#chart-families').waitFor();
  await dash.locator('#section-families').evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: join(SHOTS, 'family-rows-light.png') });
  await theme(page, 'Dark Modern', dash);
  await page.screenshot({ path: join(SHOTS, 'family-rows-dark.png') });
  await theme(page, 'Light Modern', dash);
});
