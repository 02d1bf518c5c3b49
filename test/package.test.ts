// The packaged .vsix (`npm run package`), built in a copy of the repository so the suite's other
// tests keep their dist/: what its details page and its users need is in it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { minimatch } from 'minimatch';
import { chromium } from 'playwright-core';
import { CHROMIUM, skipWithoutChromium } from './tools';

const ROOT = resolve('.');
const work = mkdtempSync(join(tmpdir(), 'cl-vsix-'));
after(() => rmSync(work, { recursive: true, force: true }));

// A copy of the tracked files (as a clean clone has them) with this checkout's node_modules.
for (const f of execFileSync('git', ['ls-files', '-z'], { encoding: 'utf8' }).split('\0').filter(Boolean)) {
  mkdirSync(dirname(join(work, f)), { recursive: true });
  cpSync(join(ROOT, f), join(work, f));
}
symlinkSync(join(ROOT, 'node_modules'), join(work, 'node_modules'));
const built = spawnSync('npm', ['run', 'package'], { cwd: work, encoding: 'utf8', maxBuffer: 1 << 26 });
const vsix = join(work, 'dist', 'consensus-lens.vsix');
const names = built.status === 0 ? execFileSync('unzip', ['-Z1', vsix], { encoding: 'utf8' }).trim().split('\n') : [];
/** A packaged file by name (vsce lower-cases README.md and CHANGELOG.md). */
const find = (name: string): string | undefined => names.find((n) => n === name) ?? names.find((n) => n.toLowerCase() === name.toLowerCase());
const read = (name: string): string => execFileSync('unzip', ['-p', vsix, find(name) ?? name], { encoding: 'utf8', maxBuffer: 1 << 26 });

test('npm run package succeeds without --skip-license: the MIT LICENSE is in the package', () => {
  assert.equal(built.status, 0, built.stdout + built.stderr);
  const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
  assert.doesNotMatch(pkg.scripts.package, /--skip-license/);
  assert.equal(pkg.license, 'MIT');
  assert.ok(find('extension/LICENSE.txt') || find('extension/LICENSE'), names.join('\n'));
  assert.match(readFileSync('LICENSE', 'utf8'), /^MIT License/);
});

const REPO_URL = 'https://github.com/consensus-lens/consensus-lens';
const tracked = new Set(execFileSync('git', ['ls-files', '-z'], { encoding: 'utf8' }).split('\0').filter(Boolean));

test('a plain vsce package: the manifest has what the Marketplace and Open VSX show, and no bypass flag is needed', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
  for (const flag of ['--allow-missing-repository', '--no-rewrite-relative-links', '--allow-star-activation', '--allow-unused-files-pattern', '--skip-license'])
    assert.ok(!pkg.scripts.package.includes(flag), `npm run package passes ${flag}`);
  assert.equal(pkg.repository.url, `${REPO_URL}.git`);
  assert.equal(pkg.bugs.url, `${REPO_URL}/issues`);
  assert.ok(pkg.homepage.startsWith(REPO_URL), pkg.homepage);
  assert.ok(pkg.keywords.length >= 5 && pkg.keywords.length <= 30 && pkg.keywords.every((k: string) => /^[a-z0-9-]+$/.test(k)), pkg.keywords.join());
  assert.ok(pkg.categories.length > 0);
  assert.match(pkg.galleryBanner.color, /^#[0-9a-f]{6}$/i);
  assert.ok(['dark', 'light'].includes(pkg.galleryBanner.theme));
  assert.equal(pkg.preview, pkg.version.startsWith('0.'), '0.x is a preview');
  assert.match(pkg.icon, /\.png$/);
  assert.ok(find(`extension/${pkg.icon}`), `the icon ${pkg.icon} is not packaged`);
  assert.equal(execFileSync('file', ['-b', pkg.icon], { encoding: 'utf8' }).split(',')[0], 'PNG image data');
});

test("the README's images are https URLs of files in the repository; vsce points its document links to the repository", () => {
  const source = readFileSync('README.md', 'utf8');
  const images = [...source.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]);
  assert.ok(images.length >= 9, images.join(' '));
  for (const url of images) {
    const m = /^https:\/\/raw\.githubusercontent\.com\/consensus-lens\/consensus-lens\/main\/(.+)$/.exec(url);
    assert.ok(m, `README image ${url} is not a raw URL into ${REPO_URL}`);
    assert.ok(tracked.has(m[1]), `README image ${url}: ${m[1]} is not a file of the repository`);
  }
  const readme = read('extension/README.md');
  const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((l) => !/^(#|mailto:)/.test(l));
  assert.ok(links.length > images.length, 'the README links documents too');
  for (const l of links) {
    const m = /^https:\/\/(?:raw\.githubusercontent\.com\/consensus-lens\/consensus-lens\/main|github\.com\/consensus-lens\/consensus-lens\/blob\/HEAD)\/([^#]+)(#.*)?$/.exec(l);
    assert.ok(m, `the packaged README links ${l}, which is neither in the repository nor an anchor`);
    assert.ok(tracked.has(m[1]), `the packaged README links ${l}: ${m[1]} is not a file of the repository`);
  }
  // the README says the command line ships inside the extension, and how to call it
  assert.match(readme, /ships inside the extension/);
  assert.match(readme, /extensions\/consensus-lens\.consensus-lens-\*\/dist\/cli\.js/);
});

test('the package carries what runs and what the details page shows, and its size is the one the README states', () => {
  const files = names.filter((n) => n.startsWith('extension/') && !n.endsWith('/'));
  const allowed = /^extension\/(dist\/[\w-]+\.js|dist\/webview\/[\w-]+\.(js|css)|media\/(icon\.png|activity\.svg)|package\.json|readme\.md|changelog\.md|LICENSE\.txt)$/i;
  for (const f of files) assert.match(f, allowed, `${f} is packaged`);
  for (const f of ['extension/dist/extension.js', 'extension/dist/cli.js', 'extension/dist/cli-main.js', 'extension/dist/score-worker-main.js', 'extension/dist/mathjs.js', 'extension/dist/webview/main.js'])
    assert.ok(names.includes(f), `${f} is missing`);
  const mb = statSync(vsix).size / 1e6;
  const stated = /The `\.vsix` is\s+about ([\d.]+) MB/.exec(readFileSync('README.md', 'utf8'));
  assert.ok(stated, 'the README states the .vsix size');
  assert.ok(Math.abs(Number(stated[1]) - mb) <= 0.15, `the README says ${stated[1]} MB; the package is ${mb.toFixed(2)} MB`);
});

test('no bundle points to a source map the package does not ship', () => {
  const js = names.filter((n) => n.endsWith('.js'));
  assert.ok(js.length >= 6);
  assert.ok(!names.some((n) => n.endsWith('.map')));
  for (const n of js) assert.doesNotMatch(read(n), /^\/\/# sourceMappingURL=/m, n);
});

test('no V8 code cache is shipped (made for the build machine\'s Node only): the packaged CLI compiles its bundles and runs', () => {
  assert.ok(!names.some((n) => n.endsWith('.cache')), names.join('\n'));
  const out = join(work, 'unpacked');
  execFileSync('unzip', ['-q', vsix, '-d', out]);
  const r = spawnSync(process.execPath, [join(out, 'extension', 'dist', 'cli.js'), '--version'], { encoding: 'utf8', env: { ...process.env, CONSENSUS_LENS_CODE_CACHE_REPORT: '1' } });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^consensus-lens \d+\.\d+\.\d+/);
  assert.match(r.stderr, /code cache: not used/);
  const rep = spawnSync(process.execPath, [join(out, 'extension', 'dist', 'cli.js'), 'report', 'examples/demo-run', '--jobs', '2'], { encoding: 'utf8' });
  assert.equal(rep.status, 0, rep.stderr);
});

test('activation: the log patterns the readers read, not every workspace with a .jsonl', () => {
  const pkg = JSON.parse(read('extension/package.json'));
  const globs: string[] = pkg.activationEvents.filter((e: string) => e.startsWith('workspaceContains:')).map((e: string) => e.slice('workspaceContains:'.length));
  assert.ok(!globs.includes('**/*.jsonl'));
  const hit = (p: string) => globs.some((g) => minimatch(p, g, { dot: true }));
  // every writer the readers follow (native, verl, TTRL, TRL, W&B tables, NeMo RL)
  for (const f of [
    'runs/a/step_000012.jsonl',
    'examples/demo-run/step-000.jsonl',
    'runs/ttrl-ec/rollouts/12.jsonl',
    'test/fixtures/logs/writers/verl-uid/val/0.jsonl',
    'out/completions/completions_00001.parquet',
    'out/completions/train/completions_00002.parquet',
    'wandb/run-20250101_000000-def456/files/media/table/val/generations_0_73e9.table.json',
    'wandb/offline-run-20250101_000000-abc123/files/media/table/completions_20_477.table.json',
    'logs/exp_001/train_data_step1.jsonl',
    'logs/exp_001/val_data_step2.jsonl',
    'outputs/rollouts/step_3/train_rollouts.jsonl',
    'outputs/rollouts/step_3/eval_rollouts_gsm8k.jsonl',
    'export/dumped_evals/global_step_5_evals/openai_gsm8k.jsonl',
    'export/dumped_evals/eval_only/aime.jsonl',
    'dump/trajectory/3.jsonl',
    'dump/trajectory/eval_3.jsonl',
  ])
    assert.ok(hit(f), f);
  for (const f of ['data/train.jsonl', 'notes.jsonl', 'eval/results.jsonl', 'data/completions.parquet']) assert.ok(!hit(f), f);
});

test("the packaged README's details page renders every image from its https URL (Chromium; the repository's files served for the URLs)", { skip: skipWithoutChromium }, async () => {
  // markdown-it is the renderer vsce itself uses for the details page (a dependency of @vscode/vsce).
  // @ts-expect-error: markdown-it ships no types, and only render() is used here
  const MarkdownIt = (await import('markdown-it')).default as new (o: { html: boolean }) => { render(md: string): string };
  const html = `<!doctype html><meta charset="utf-8"><body>${new MarkdownIt({ html: false }).render(read('extension/README.md'))}</body>`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage();
    const served: string[] = [];
    const refused: string[] = [];
    // No network here: a raw URL into the repository is answered with the file at that path, as
    // the repository would; anything else is refused (and fails the test if it was an image).
    await page.route('**/*', async (route) => {
      const url = route.request().url();
      const m = /^https:\/\/raw\.githubusercontent\.com\/consensus-lens\/consensus-lens\/main\/(.+)$/.exec(url);
      if (m && tracked.has(m[1])) {
        served.push(m[1]);
        await route.fulfill({ status: 200, contentType: 'image/png', body: readFileSync(m[1]) });
      } else {
        refused.push(url);
        await route.abort();
      }
    });
    await page.setContent(html, { waitUntil: 'load' });
    const images = await page.$$eval('img', (els) => els.map((e) => ({ src: (e as unknown as { src: string }).src, w: (e as unknown as { naturalWidth: number }).naturalWidth })));
    assert.ok(images.length >= 9, `${images.length} images rendered`);
    for (const i of images) assert.ok(i.w > 0, `the image ${i.src} did not render`);
    assert.equal(new Set(served).size, new Set(images.map((i) => i.src)).size);
    assert.deepEqual(refused, [], 'the page asks for nothing outside the repository');
  } finally {
    await browser.close();
  }
});
