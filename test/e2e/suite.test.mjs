// The Consensus Lens e2e suite: real VS Code (code-server 4.100.3) + Chromium, driven with
// playwright-core. Started by run.mjs, which installs the packaged .vsix, prepares the workspace
// (a copy of examples/demo-run and a hostile-text run) and provides E2E_URL. The tests share one
// page and run in order; each leaves a screenshot in test/e2e/.work/.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { launch, openWorkbench, runCommand, webview, retry } from './lib.mjs';

const URL_ = process.env.E2E_URL;
const ROOT = process.env.E2E_ROOT;
const WORKSPACE = process.env.E2E_WORKSPACE;
const DEMO = WORKSPACE && join(WORKSPACE, 'demo-run');
const SHOTS = ROOT && join(ROOT, 'media/screenshots');
const figures = {};
let ctx;

/** The CLI's numbers (docs/contract.md#command-line) for a run, keyed "step|question_id". */
function cliScores(path, extra = []) {
  const out = execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'score', path, ...extra], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const m = new Map();
  for (const line of out.trim().split('\n')) {
    const o = JSON.parse(line);
    m.set(`${o.step}|${o.question_id}`, o);
  }
  return m;
}

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

const close = (a, b, tol = 1e-6) => Math.abs(a - b) <= tol * Math.max(1, Math.abs(a), Math.abs(b));

async function openExplorer(page) {
  const title = page.locator('.sidebar .composite.title', { hasText: /consensus lens/i });
  if (!(await title.count()) || !(await title.first().isVisible())) await page.locator('.activitybar [aria-label^="Consensus Lens"]').first().click();
  await title.first().waitFor({ timeout: 10_000 });
  await page.locator('.sidebar .monaco-list-row').first().waitFor({ timeout: 30_000 });
}

/** Editor text as rendered: non-breaking spaces back to spaces, wrapped lines joined. */
const nbsp = (t) => t.replace(/\u00a0/g, ' ').replace(/\n/g, '');

/** The explorer's visible rows: aria-label and level. */
async function rowInfo(page) {
  return page.locator('.sidebar .monaco-list-row').evaluateAll((els) => els.map((e) => ({ label: e.getAttribute('aria-label') ?? '', level: Number(e.getAttribute('aria-level')), expanded: e.getAttribute('aria-expanded') })));
}

/**
 * Reveals and clicks a path of the explorer: [run, 'step N', question?, 'roll-out i'?]. Collapses
 * everything first so the rows in question are in view (the tree renders visible rows only).
 */
async function revealPath(page, path, { collapse = true } = {}) {
  await openExplorer(page);
  if (collapse) {
    await page.locator('.sidebar .composite.title').first().hover();
    await page.locator('.sidebar .title-actions [aria-label="Collapse All"]').first().click({ timeout: 5_000 });
    await page.waitForTimeout(150);
  }
  let from = 0;
  for (let depth = 0; depth < path.length; depth++) {
    const want = path[depth];
    const last = depth === path.length - 1;
    let index = -1;
    await retry(async () => {
      const rows = await rowInfo(page);
      index = -1;
      for (let i = from; i < rows.length; i++) {
        if (rows[i].level <= depth && i > from) break;
        if (rows[i].level === depth + 1 && (rows[i].label === want || rows[i].label.startsWith(want + ','))) {
          index = i;
          break;
        }
      }
      assert.ok(index >= 0, `tree row "${want}" in ${JSON.stringify(rows.map((r) => r.label))}`);
    }, { timeout: 20_000 });
    const row = page.locator('.sidebar .monaco-list-row').nth(index);
    if (last) await row.click();
    else if ((await row.getAttribute('aria-expanded')) === 'false') await row.locator('.monaco-tl-twistie').click();
    from = index;
  }
}

/** Rows of the rollout table as objects {index, <col>: value}. */
async function tableRows(wv) {
  return wv.locator('#rollout-table tbody tr').evaluateAll((trs) =>
    trs.map((tr) => {
      const o = { index: Number(tr.getAttribute('data-index')) };
      for (const td of tr.querySelectorAll('td[data-col]')) o[td.getAttribute('data-col')] = td.getAttribute('data-value');
      return o;
    }),
  );
}

async function shownQuestion(wv) {
  return wv.locator('#app').evaluate((el) => ({ q: el.dataset.questionId, step: el.dataset.step, state: el.dataset.state }));
}

async function selectQuestion(page, run, step, qid) {
  const wv = webview(page);
  // Rows are found by position: a tree that re-renders between finding the row and the click
  // (groups completing, a run discovered right after a reload) can take the click elsewhere, as
  // it would a person's. Then look the row up again and click once more.
  for (let attempt = 1; ; attempt++) {
    await revealPath(page, [run, `step ${step}`, qid]);
    try {
      await retry(async () => {
        const shown = await shownQuestion(wv);
        assert.equal(shown.q, qid);
        assert.equal(shown.step, String(step));
      }, { timeout: attempt < 3 ? 8_000 : 20_000 });
      return wv;
    } catch (e) {
      if (attempt >= 3) throw e;
    }
  }
}

// Console warnings from our webviews' libraries (cytoscape warns once per element and style pass
// about a style mapping without data), counted over the whole session.
const libraryWarnings = [];

before(async () => {
  assert.ok(URL_, 'E2E_URL is not set: run this suite through run.mjs');
  ctx = await launch();
  ctx.page.on('pageerror', (e) => console.log('[pageerror]', e.message));
  ctx.page.on('console', (m) => {
    if (m.type() === 'warning' && /Do not assign mappings|cytoscape|The style property/i.test(m.text())) libraryWarnings.push(m.text().slice(0, 200));
  });
  await openWorkbench(ctx.page, URL_);
});

afterEach(async (t) => {
  const name = t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
  await ctx?.page.screenshot({ path: join(process.env.E2E_WORK, `end-${name}.png`) }).catch(() => {});
});

after(async () => {
  if (ctx) {
    // Leave the workbench clean for the next test file (same code-server, same workspace).
    await runCommand(ctx.page, 'View: Close All Editors').catch(() => {});
    await ctx.page.waitForTimeout(500);
    assert.deepEqual(ctx.external, [], 'no network access beyond code-server');
    await ctx.browser.close();
  }
  if (process.env.E2E_WORK) writeFileSync(join(process.env.E2E_WORK, 'figures.json'), JSON.stringify(figures, null, 2));
  console.log('figures:', JSON.stringify(figures));
});

test('smoke: the extension activates and its commands are in the palette', async () => {
  const { page } = ctx;
  await runCommand(page, 'Consensus Lens: Show Consensus');
  // Without a selected question the command asks for one.
  const pick = page.locator('.quick-input-widget .monaco-list-row').first();
  await pick.waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
  const wv = webview(page);
  await retry(async () => assert.equal((await shownQuestion(wv)).state, 'ready'), { timeout: 30_000 });
  // Every contributed command is in the palette.
  for (const title of ['Open Run…', 'Re-score Run…', 'Launch Training…']) {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    await page.waitForTimeout(100);
    await page.keyboard.type(`Consensus Lens: ${title}`);
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 5_000 });
  }
  await page.keyboard.press('Escape');
});

test('explorer: runs → steps → questions with regime, gate, overturn and mismatch markers', async () => {
  const { page } = ctx;
  const scores = cliScores(DEMO);
  const first = [...scores.values()][0];
  await revealPath(page, ['demo-run', `step ${first.step}`]);
  await retry(async () => {
    const labels = (await rowInfo(page)).map((r) => r.label);
    assert.ok(labels.some((l) => /gate \d/.test(l)), `scored questions in ${labels.join(' | ')}`);
    assert.ok(labels.some((l) => /saturated|contested|competence floor/.test(l)));
  });
  // The overturn filter keeps overturned questions only.
  await runCommand(page, 'Consensus Lens: Show CoRE Overturns Only');
  await retry(async () => {
    const qs = (await rowInfo(page)).filter((r) => r.level === 3).map((r) => r.label);
    assert.ok(qs.length > 0 && qs.every((l) => /CoRE overturns/.test(l)), qs.join(' | '));
  });
  await runCommand(page, 'Consensus Lens: Show All Questions');
});

test('explorer: a step of 1,000 questions expands (time recorded; the 200 ms target is a benchmark figure)', async () => {
  const { page } = ctx;
  await revealPath(page, ['big-run']);
  // Wait until the background pass has scored the run (its row stops saying "scoring n/N").
  const rows = page.locator('.sidebar .monaco-list-row');
  let index = -1;
  await retry(async () => {
    const info = await rowInfo(page);
    const runRow = info.find((r) => r.level === 1 && r.label.startsWith('big-run,'));
    assert.ok(runRow && !/scoring/.test(runRow.label), runRow?.label);
    index = info.findIndex((r) => r.level === 2 && r.label.startsWith('step 1, 1000 questions'));
    assert.ok(index >= 0);
  }, { timeout: 30_000 });
  const times = [];
  for (let i = 0; i < 5; i++) {
    const row = rows.nth(index);
    const t0 = Date.now();
    await row.locator('.monaco-tl-twistie').click();
    await page.locator('.sidebar .monaco-list-row[aria-level="3"]', { hasText: 'big/0000' }).first().waitFor({ timeout: 10_000 });
    times.push(Date.now() - t0);
    await row.locator('.monaco-tl-twistie').click(); // collapse again
    await page.locator('.sidebar .monaco-list-row[aria-level="3"]').first().waitFor({ state: 'detached', timeout: 10_000 });
  }
  figures.expand1000Ms = times;
  console.log('expand a step of 1,000 questions (ms, click to first row):', JSON.stringify(times));
  // The 200 ms target is read off these figures on a quiet machine (BENCHMARKS.md), not asserted
  // here: on a loaded 2-core CI box a timer measures the load. The bound below is ten times the
  // target: what a tree that materialised every question's children (or scored on expansion) costs.
  const median = [...times].sort((a, b) => a - b)[2];
  assert.ok(median < 2000, `${times} ms`);
  await page.locator('.sidebar .title-actions [aria-label="Collapse All"]').first().click();
});

let overturned; // { step, qid }

test('panel: an overturned question matches the CLI numbers', async () => {
  const { page } = ctx;
  const scores = cliScores(DEMO);
  const pick = [...scores.values()].find((o) => o.results.core && o.results.majority && o.results.core.label !== o.results.majority.label);
  assert.ok(pick, 'the demo run has a question CoRE overturns');
  overturned = { step: pick.step, qid: pick.question_id };
  const wv = await selectQuestion(page, 'demo-run', pick.step, pick.question_id);
  await wv.locator('#overturn', { hasText: 'overturns' }).waitFor();
  // Operator strip: every label the CLI computed.
  for (const [op, r] of Object.entries(pick.results)) {
    const label = await wv.locator(`#label-strip .op[data-op="${op}"] .label`).getAttribute('data-value');
    assert.equal(label, r.label ?? '', `${op} label`);
  }
  const gate = Number(await wv.locator('#readout-gate').getAttribute('data-value'));
  assert.ok(close(gate, pick.results.core.gate), `gate ${gate} vs ${pick.results.core.gate}`);
  // Roll-out table: x*, rewards of every operator, advantages of the configured one (majority).
  const rows = await tableRows(wv);
  assert.equal(rows.length, pick.n);
  for (const row of rows) {
    const i = row.index;
    assert.ok(close(Number(row.mass), pick.results.core.mass[i]), `x*[${i}]`);
    for (const [op, r] of Object.entries(pick.results)) assert.ok(close(Number(row[`reward-${op}`]), r.rewards[i]), `${op} reward[${i}]`);
    assert.ok(close(Number(row.advantage), pick.results.majority.advantages[i]), `advantage[${i}]`);
  }
  // Graph: one node per roll-out, one compound node per answer class.
  const graph = wv.locator('#graph');
  assert.equal(Number(await graph.getAttribute('data-nodes')), pick.n);
  const classes = await wv.locator('#class-table tbody tr').count();
  assert.ok(Number(await graph.getAttribute('data-classes')) >= classes);
  const masses = await wv.locator('#class-table td[data-col="mass"]').evaluateAll((tds) => tds.map((td) => Number(td.getAttribute('data-value'))));
  assert.ok(close(masses.reduce((a, b) => a + b, 0), 1, 1e-4), 'x* sums to 1');
});

test('panel: moving κ re-scores in the host; the label and rewards change as the CLI says; reset restores', async () => {
  const { page } = ctx;
  const run = join(WORKSPACE, 'coherence-run');
  const base = cliScores(run);
  const at1 = cliScores(run, ['--kappa', '1']);
  const key = [...base.keys()].find((k) => base.get(k).results.core.label !== at1.get(k).results.core.label);
  assert.ok(key, 'a question whose CoRE label depends on κ');
  const [step, qid] = [base.get(key).step, base.get(key).question_id];
  const wv = await selectQuestion(page, 'coherence-run', step, qid);
  const before = await tableRows(wv);
  await wv.locator('#slider-kappa').fill('1');
  await retry(async () => assert.equal(await wv.locator('#slider-kappa-value').textContent(), '1'));
  await retry(async () => {
    assert.equal(await wv.locator('#label-strip .op[data-op="core"] .label').getAttribute('data-value'), at1.get(key).results.core.label ?? '');
    for (const row of await tableRows(wv)) assert.ok(close(Number(row['reward-core']), at1.get(key).results.core.rewards[row.index]), `core reward[${row.index}] at κ=1`);
  });
  // The enlarged class boxes stay in view (labels included).
  await retry(async () => assert.equal(await wv.locator('#graph').evaluate(() => window.consensusLens.graphInView()), true));
  const after = await tableRows(wv);
  assert.ok(after.some((r) => !close(Number(r['reward-core']), Number(before.find((b) => b.index === r.index)['reward-core']))), 'CoRE rewards changed');
  figures.kappaFlip = { question: key, before: base.get(key).results.core.label, after: at1.get(key).results.core.label };
  await wv.locator('#reset').click();
  await retry(async () => {
    assert.equal(await wv.locator('#label-strip .op[data-op="core"] .label').getAttribute('data-value'), base.get(key).results.core.label ?? '');
    assert.equal(await wv.locator('#slider-kappa').inputValue(), '0.1');
  });
});

test('roll-out: a table row, a graph node and the tree open its text read-only; reveal in log file', async () => {
  const { page } = ctx;
  const wv = await selectQuestion(page, 'demo-run', overturned.step, overturned.qid);
  const editorText = async () => nbsp(await page.locator('.editor-instance .monaco-editor .view-lines').last().innerText());
  await wv.locator('#rollout-table tbody tr[data-index="3"]').click();
  await page.locator('.tabs-container .tab', { hasText: 'roll-out 3' }).first().waitFor({ timeout: 15_000 });
  await retry(async () => assert.match(await editorText(), /Consensus Lens — roll-out 3/));
  // The editor reveals the answer once its decorations arrive; a long header (one reward per
  // operator) is then partly scrolled out of view: scroll back to the top to read it.
  await retry(async () => {
    await page.locator('.editor-instance .monaco-editor').last().hover();
    await page.mouse.wheel(0, -10_000);
    assert.match(await editorText(), /# log: .*demo-run.*:\d+/);
  });
  // Keyboard: the table is navigable; Enter opens the focused roll-out.
  await wv.locator('#rollout-table tbody tr[data-index="3"]').focus();
  await page.keyboard.press('ArrowDown');
  const focused = await wv.locator('#rollout-table tbody tr:focus').getAttribute('data-index');
  assert.ok(focused !== null && focused !== '3', 'ArrowDown moves the focus');
  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab', { hasText: `roll-out ${focused}.txt` }).first().waitFor({ timeout: 15_000 });
  // The graph: a node tap opens that roll-out.
  const pos = await wv.locator('#graph').evaluate((el) => {
    el.scrollIntoView();
    const p = window.consensusLens.nodePosition(5);
    const r = el.getBoundingClientRect();
    return p && { x: p.x - r.left, y: p.y - r.top };
  });
  assert.ok(pos, 'node 5 is drawn');
  await wv.locator('#graph').click({ position: pos });
  await page.locator('.tabs-container .tab', { hasText: 'roll-out 5' }).first().waitFor({ timeout: 15_000 });
  // Reveal in log file: opens the log at the record's line.
  await runCommand(page, 'Consensus Lens: Reveal Roll-out in Log File');
  await page.locator('.tabs-container .tab', { hasText: /\.jsonl/ }).first().waitFor({ timeout: 15_000 });
  // The tree: a roll-out row under the question.
  await revealPath(page, ['demo-run', `step ${overturned.step}`, overturned.qid, 'roll-out 7']);
  await page.locator('.tabs-container .tab', { hasText: 'roll-out 7' }).first().waitFor({ timeout: 15_000 });
});

test('re-score run: another κ re-scores every group and reports the labels that flip', async () => {
  const { page } = ctx;
  const run = join(WORKSPACE, 'coherence-run');
  const base = cliScores(run);
  const at1 = cliScores(run, ['--kappa', '1']);
  const flips = [...base.keys()].filter((k) => base.get(k).results.core.label !== at1.get(k).results.core.label).length;
  assert.ok(flips > 0);
  // The run picker, then the parameters' input box. A quick input that loses focus closes (as it
  // does for a person): then start the command again, up to three times.
  for (let attempt = 1; ; attempt++) {
    await runCommand(page, 'Consensus Lens: Re-score Run…');
    try {
      // The run picker: filter it to the run, then accept (a picker that closed while being
      // filtered shows no row: the command starts again, as for the input box below).
      const pick = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'coherence-run' }).first();
      await pick.waitFor({ state: 'attached' });
      await page.locator('.quick-input-widget input[type="text"]').first().focus();
      await page.keyboard.type('coherence-run');
      await retry(async () => assert.equal(await page.locator('.quick-input-widget .monaco-list-row:visible').count(), 1), { timeout: 10_000 });
      await page.keyboard.press('Enter');
      await page.locator('.quick-input-widget input[type="text"][aria-label*="Re-score coherence-run"]:visible').first().waitFor({ timeout: 10_000 });
      break;
    } catch (e) {
      if (attempt >= 3) throw e;
      await page.keyboard.press('Escape');
    }
  }
  await page.keyboard.type('core kappa=1');
  await page.keyboard.press('Enter');
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'pseudo-labels flip' }).first();
  await toast.waitFor({ timeout: 30_000 });
  const text = await toast.innerText();
  assert.match(text, new RegExp(`${flips} of ${base.size} pseudo-labels flip under core`));
  figures.rescore = text.split('\n').find((l) => l.includes('flip'));
  await page.keyboard.press('Escape');
});

test('switching questions renders the new question (render time recorded; the 150 ms target is a benchmark figure)', async () => {
  const { page } = ctx;
  const scores = [...cliScores(DEMO).values()];
  const step = scores[0].step;
  const qids = scores.filter((o) => o.step === step).map((o) => o.question_id).slice(0, 10);
  await revealPath(page, ['demo-run', `step ${step}`]);
  const wv = webview(page);
  const times = [];
  for (const q of qids) {
    const rows = await rowInfo(page);
    const i = rows.findIndex((r) => r.level === 3 && r.label.startsWith(q + ','));
    if (i < 0) continue;
    const t0 = Date.now();
    await page.locator('.sidebar .monaco-list-row').nth(i).click();
    await retry(async () => assert.equal((await shownQuestion(wv)).q, q), { timeout: 10_000, interval: 10 });
    await retry(async () => assert.ok(await wv.locator('body').getAttribute('data-render-ms')), { interval: 10 });
    times.push({ q, wall: Date.now() - t0, render: Number(await wv.locator('body').getAttribute('data-render-ms')), parts: await wv.locator('body').getAttribute('data-render-parts') });
  }
  const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  figures.switchRenderMsMedian = med(times.map((t) => t.render));
  figures.switchWallMsMedian = med(times.map((t) => t.wall));
  console.log('question switch (ms):', JSON.stringify(times));
  assert.ok(times.length >= 5);
  // The 150 ms target is a figure for BENCHMARKS.md from a quiet machine; the assertion only
  // catches a render that has lost its budget altogether (ten times the target).
  assert.ok(figures.switchRenderMsMedian < 1500, `median render ${figures.switchRenderMsMedian} ms`);
  // The host's own figure: from the command (tree click) until the view is on screen (the
  // webview's clock, same machine), logged to the extension's output channel (without
  // Playwright's polling in between, and without the "rendered" message's trip back).
  const hostTimes = await retry(async () => {
    const logs = findFiles(join(process.env.E2E_WORK, 'user-data/logs'), (f) => f.endsWith('Consensus Lens.log'));
    const lines = logs.flatMap((f) => readFileSync(f, 'utf8').split('\n')).filter((l) => /question switch to /.test(l));
    const ms = lines.map((l) => Number(/: ([0-9.]+) ms until rendered/.exec(l)?.[1])).filter(Number.isFinite);
    assert.ok(ms.length >= 5, `switch lines in ${logs.join(', ')}`);
    return ms.slice(-times.length);
  }, { timeout: 10_000 });
  figures.switchHostMsMedian = med(hostTimes);
  console.log('question switch, host → rendered (ms):', JSON.stringify(hostTimes.map((x) => Math.round(x))));
  // The end-to-end figure crosses three processes (extension host, workbench, webview) on a
  // 2-core machine; it is recorded, and bounded loosely so that CI noise does not fail the suite.
  assert.ok(figures.switchHostMsMedian < 300, `median host-to-rendered ${figures.switchHostMsMedian} ms`);
});

test('screenshots: dark theme, explorer and panel', async () => {
  const { page } = ctx;
  mkdirSync(SHOTS, { recursive: true });
  await runCommand(page, 'View: Close All Editors');
  const wv = await selectQuestion(page, 'demo-run', overturned.step, overturned.qid);
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(SHOTS, 'panel-light.png') });
  await runCommand(page, 'Preferences: Color Theme');
  await page.waitForTimeout(300);
  await page.keyboard.type('Dark Modern');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Dark Modern' }).first().click();
  await retry(async () => assert.ok(await page.locator('.monaco-workbench.vs-dark').count()), { timeout: 20_000 });
  await retry(async () => assert.match((await wv.locator('body').getAttribute('class')) ?? '', /vscode-dark/), { timeout: 10_000 });
  await page.waitForTimeout(600);
  await page.screenshot({ path: join(SHOTS, 'panel-dark.png') });
  await runCommand(page, 'Preferences: Color Theme');
  await page.waitForTimeout(300);
  await page.keyboard.type('Light Modern');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Light Modern' }).first().click();
  await retry(async () => assert.equal(await page.locator('.monaco-workbench.vs-dark').count(), 0), { timeout: 20_000 });
});

test('security: roll-out text with <script>, <img onerror> and </textarea> renders as text', async () => {
  const { page } = ctx;
  const wv = await selectQuestion(page, 'hostile-run', 1, 'hostile/<b>001</b>');
  const previews = await wv.locator('#rollout-table td[data-col="preview"]').allTextContents();
  assert.ok(previews.some((t) => t.includes('<script>document.body.dataset.pwned')), 'script tag shown as text');
  assert.ok(previews.some((t) => t.includes('<img src=x onerror=')), 'img tag shown as text');
  assert.ok(previews.some((t) => t.includes('</textarea>')), 'closing tag shown as text');
  assert.equal(await wv.locator('#app img, #app script, #app textarea').count(), 0);
  assert.equal(await wv.locator('body').getAttribute('data-pwned'), null);
  assert.equal(await wv.locator('#question-id').textContent(), 'hostile/<b>001</b>');
  assert.equal(await wv.locator('#question-id b, #prompt i').count(), 0);
  const csp = await wv.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'nonce-[A-Za-z0-9]+'/);
  // The roll-out document shows the raw text.
  await wv.locator('#rollout-table tbody tr[data-index="0"]').click();
  await retry(async () => assert.match(nbsp(await page.locator('.editor-instance .monaco-editor .view-lines').last().innerText()), /<script>document\.body\.dataset\.pwned/));
});

test('live: a group appended to a followed log file arrives in the explorer and the status bar', async () => {
  const { page } = ctx;
  const files = readdirSync(DEMO).filter((f) => f.endsWith('.jsonl')).sort();
  const target = join(DEMO, files[files.length - 1]);
  const steps = [...cliScores(DEMO).values()].map((o) => o.step);
  const newStep = Math.max(...steps) + 1;
  const rollouts = Array.from({ length: 8 }, (_, i) => ({
    response: `Working it out, path ${i % 2}: the total is ${i < 5 ? 24 : 25}. So the answer is \\boxed{${i < 5 ? 24 : 25}}.`,
    mean_logprob: -0.3 - 0.01 * i,
    sample_idx: i,
  }));
  const text = readFileSync(target, 'utf8');
  const t0 = Date.now();
  appendFileSync(target, (text.endsWith('\n') ? '' : '\n') + JSON.stringify({ kind: 'group', step: newStep, question_id: 'live/appended', prompt: 'Appended while followed', rollouts }) + '\n');
  await revealPath(page, ['demo-run', `step ${newStep}`, 'live/appended']);
  figures.liveArrivalMs = Date.now() - t0;
  const status = page.locator('.statusbar-item', { hasText: /step \d+ ·/ }).first();
  await retry(async () => assert.match(await status.innerText(), new RegExp(`step ${newStep} · 1 groups`)), { timeout: 15_000 });
  const wv = webview(page);
  await retry(async () => assert.equal((await shownQuestion(wv)).q, 'live/appended'));
});

test('discovery: a run folder a training job creates appears without a reload; the status bar follows the run that grows', async () => {
  const { page } = ctx;
  // No panel: the status bar is not tied to the panel's question.
  await runCommand(page, 'View: Close All Editors');
  const dir = join(WORKSPACE, 'job-run');
  mkdirSync(dir, { recursive: true });
  const group = (step, qid, right) => JSON.stringify({ kind: 'group', step, question_id: qid, rollouts: Array.from({ length: 6 }, (_, i) => ({ response: `so \\boxed{${i < right ? 7 : 8}}`, mean_logprob: -0.2 - 0.01 * i, sample_idx: i })) }) + '\n';
  const file = join(dir, '1.jsonl');
  writeFileSync(file, group(1, 'job/1', 4));
  const t0 = Date.now();
  await openExplorer(page);
  await retry(async () => {
    const runs = (await rowInfo(page)).filter((r) => r.level === 1).map((r) => r.label);
    assert.ok(runs.some((l) => l.startsWith('job-run')), `runs: ${runs.join(' | ')}`);
  }, { timeout: 45_000 });
  figures.newRunFoundMs = Date.now() - t0;
  // It grows: the status bar moves to it (the demo run grew before it, and was discovered first).
  appendFileSync(file, group(2, 'job/2', 5));
  const status = page.locator('.statusbar-item', { hasText: /step \d+ ·/ }).first();
  await retry(async () => assert.match(await status.innerText(), /job-run · step 2 · 1 groups/), { timeout: 20_000 });
  // And back when the demo run grows again.
  const demoFiles = readdirSync(DEMO).filter((f) => f.endsWith('.jsonl')).sort();
  const demoFile = join(DEMO, demoFiles[demoFiles.length - 1]);
  appendFileSync(demoFile, group(99, 'live/again', 4));
  await retry(async () => assert.match(await status.innerText(), /demo-run · step 99 · 1 groups/), { timeout: 20_000 });
});

test('settings: a run outside the workspace listed in consensusLens.runs is followed', async () => {
  const { page } = ctx;
  // run.mjs seeded the user settings with .work/settings-run before VS Code started.
  await revealPath(page, ['settings-run', 'step 2', 'from/settings']);
  await retry(async () => assert.equal((await shownQuestion(webview(page))).q, 'from/settings'));
});

test('open run: a log file outside the workspace is picked and followed', async () => {
  const { page } = ctx;
  const dir = join(process.env.E2E_WORK, 'outside-run');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'picked.jsonl');
  const rollouts = Array.from({ length: 6 }, (_, i) => ({ response: `so \\boxed{${i < 4 ? 3 : 4}}`, mean_logprob: -0.2 }));
  writeFileSync(file, JSON.stringify({ kind: 'group', step: 5, question_id: 'picked/1', rollouts }) + '\n');
  await runCommand(page, 'Consensus Lens: Open Run…');
  // code-server's open dialog is a quick input holding a path.
  const input = page.locator('.quick-input-widget input[type="text"]');
  await input.waitFor({ state: 'visible' });
  // The dialog fills in its start folder asynchronously: wait for it, then replace it.
  await retry(async () => assert.match(await input.inputValue(), /\//));
  await retry(async () => {
    await input.fill(file);
    await page.waitForTimeout(200);
    assert.equal(await input.inputValue(), file);
  });
  await input.press('Enter');
  await revealPath(page, ['picked.jsonl', 'step 5', 'picked/1']);
  const wv = webview(page);
  await retry(async () => assert.equal((await shownQuestion(wv)).q, 'picked/1'));
});

test('reload: the panel survives a window reload (serializer + state), also for a run opened by hand', async () => {
  const { page } = ctx;
  const wv = webview(page);
  // The panel shows picked/1, from a run outside the workspace opened with "Open Run…".
  await retry(async () => assert.equal((await shownQuestion(wv)).q, 'picked/1'));
  await page.waitForTimeout(500);
  // Reload the window the way a user does (the workbench saves its state, then reloads).
  await runCommand(page, 'Developer: Reload Window');
  await page.waitForTimeout(2000);
  await openWorkbench(page, null);
  await retry(async () => {
    const s = await shownQuestion(webview(page));
    assert.equal(s.q, 'picked/1');
    assert.equal(s.state, 'ready');
  }, { timeout: 45_000 });
  // And a workspace run's question after another reload.
  await selectQuestion(page, 'demo-run', overturned.step, overturned.qid);
  await page.waitForTimeout(500);
  await runCommand(page, 'Developer: Reload Window');
  await page.waitForTimeout(2000);
  await openWorkbench(page, null);
  await retry(async () => {
    const s = await shownQuestion(webview(page));
    assert.equal(s.q, overturned.qid);
    assert.equal(s.state, 'ready');
  }, { timeout: 45_000 });
});

test('logs: no cytoscape warnings in the webviews, no rejected editor calls in the extension host log', async () => {
  assert.deepEqual(libraryWarnings.slice(0, 5), [], `${libraryWarnings.length} library warnings`);
  const logs = findFiles(join(process.env.E2E_WORK, 'user-data/logs'), (f) => /exthost\.log$/.test(f));
  assert.ok(logs.length > 0, 'the extension host log');
  const bad = logs.flatMap((f) => readFileSync(f, 'utf8').split('\n')).filter((l) => /Illegal argument: TextEditor/.test(l));
  assert.deepEqual(bad, []);
});
