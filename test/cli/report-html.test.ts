// The `report --html` page in a real browser (Chromium, as the e2e suite uses): its own CSP blocks
// nothing it needs, the series colours are right (legend and lines), every section renders, and
// logged values stay text. CONSENSUS_LENS_SCREENSHOTS=DIR also writes the README's screenshot there.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { chromium, type Browser } from 'playwright-core';
import { SERIES_COLOURS } from '../../src/cli/report-types';
import { CHROMIUM, skipWithoutChromium } from '../tools';

const dir = mkdtempSync(join(tmpdir(), 'cl-report-html-'));
let browser: Browser;
before(async () => {
  if (!CHROMIUM) return; // the tests are skipped (test/tools.ts)
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

const rgb = (hex: string) => `rgb(${parseInt(hex.slice(1, 3), 16)}, ${parseInt(hex.slice(3, 5), 16)}, ${parseInt(hex.slice(5, 7), 16)})`;

async function open(file: string) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
  const problems: string[] = [];
  page.on('console', (m) => (m.type() === 'error' || /Content Security Policy|Refused/.test(m.text())) && problems.push(m.text()));
  page.on('pageerror', (e) => problems.push(String(e)));
  // (page scripts as strings: this file is type-checked without the DOM library)
  await page.addInitScript("document.addEventListener('securitypolicyviolation', (e) => (window.__csp = window.__csp || []).push(e.violatedDirective + ' ' + e.blockedURI))");
  await page.goto('file://' + resolve(file));
  await page.waitForSelector('body[data-rendered="true"]', { timeout: 20_000 });
  const violations = (await page.evaluate('window.__csp || []')) as string[];
  return { page, problems: [...problems, ...violations] };
}

test('report --html on the demo run: no CSP violation, legend and lines in the series colours, every section drawn', { skip: skipWithoutChromium }, async () => {
  const file = join(dir, 'demo.html');
  const r = spawnSync(process.execPath, ['dist/cli.js', 'report', 'examples/demo-run', '--html', file], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const html = readFileSync(file, 'utf8');
  assert.doesNotMatch(html, / style="/, 'no inline style attribute (the CSP blocks them)');
  assert.doesNotMatch(html, /sourceMappingURL/);
  const { page, problems } = await open(file);
  try {
    assert.deepEqual(problems, []);
    const legend = (await page.evaluate("[...document.querySelectorAll('svg text.legend')].map((t) => ({ text: t.textContent, fill: getComputedStyle(t).fill }))")) as { text: string; fill: string }[];
    assert.equal(legend.length, 10, JSON.stringify(legend)); // accuracy of every operator the demo run allows (no self-certainty logged)
    assert.equal(new Set(legend.map((l) => l.fill)).size, legend.length, 'no two series share a colour');
    legend.forEach((l, i) => assert.equal(l.fill, rgb(SERIES_COLOURS[i]), `${l.text}: ${l.fill}`));
    const lines = (await page.evaluate("[...document.querySelectorAll('svg path.line')].map((p) => ({ stroke: getComputedStyle(p).stroke, fill: getComputedStyle(p).fill }))")) as { stroke: string; fill: string }[];
    lines.forEach((l, i) => {
      assert.equal(l.stroke, rgb(SERIES_COLOURS[i]));
      assert.equal(l.fill, 'none');
    });
    const shots = process.env.CONSENSUS_LENS_SCREENSHOTS;
    await page.evaluate('window.scrollTo(0, 0)');
    const shot = await page.screenshot({ fullPage: false });
    assert.ok(shot.length > 10_000);
    if (shots) {
      mkdirSync(shots, { recursive: true });
      writeFileSync(join(shots, 'report-html.png'), shot);
    }
    assert.equal(await page.locator('section.run table').first().locator('tbody tr').count(), 4); // 3 steps + all
    assert.equal(await page.locator('#groups tbody tr').count(), 36);
    await page.fill('#filter', 'math500/017');
    assert.equal(await page.locator('#groups tbody tr').count(), 3);
    // sorting by a header keeps every row
    await page.fill('#filter', '');
    await page.locator('#groups th', { hasText: 'N' }).first().click();
    assert.equal(await page.locator('#groups tbody tr').count(), 36);
  } finally {
    await page.close();
  }
});

test('report --html: a hostile question id and answer stay text; several runs each get their section', { skip: skipWithoutChromium }, async () => {
  const run = join(dir, 'hostile');
  mkdirSync(run);
  const evil = '<img src=x onerror="window.__pwned=1"></script><script>window.__pwned=2</script>';
  writeFileSync(join(run, 'a.jsonl'), JSON.stringify({ kind: 'group', step: 0, question_id: evil, rollouts: [1, 1, 2].map((a) => ({ response: `so \\boxed{${a === 2 ? evil.slice(0, 20) : a}}` })) }) + '\n');
  const file = join(dir, 'hostile.html');
  assert.equal(spawnSync(process.execPath, ['dist/cli.js', 'report', run, '--html', file]).status, 0);
  const { page, problems } = await open(file);
  try {
    assert.deepEqual(problems, []);
    assert.equal(await page.evaluate('window.__pwned'), undefined);
    assert.ok((await page.locator('#groups').textContent())!.includes('<img src=x'));
  } finally {
    await page.close();
  }
  const many = join(dir, 'many.html');
  assert.equal(spawnSync(process.execPath, ['dist/cli.js', 'report', 'test/fixtures/logs/writers', '--html', many]).status, 0);
  const m = await open(many);
  try {
    assert.deepEqual(m.problems, []);
    const titles = (await m.page.evaluate("[...document.querySelectorAll('section.run h2')].map((h) => h.textContent)")) as string[];
    assert.ok(titles.includes('Run verl-uid') && titles.includes('Run wandb-verl/wandb/run-20250101_000000-def456/files/media/table'), titles.join(', '));
    assert.ok((await m.page.locator('section.run h3', { hasText: 'Validation' }).count()) >= 3);
  } finally {
    await m.page.close();
  }
});
