// The persisted cache's upkeep: `cache info|clear`, the size bound held after each command that
// writes the cache (src/logs/cache/bound.ts), and `sweep --no-cache`'s private folder removed when
// the command is interrupted (src/cli/temp-dir.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheLimit, clearCache, pruneCache } from '../../src/logs/cache/bound';
import { scratchDir } from '../scratch';

const hex = (n: number) => n.toString(16).padStart(64, '0');

test('pruneCache removes the least recently used cache files down to the bound, keeps the newest, and touches nothing else', () => {
  const dir = scratchDir('cl-bound-');
  const now = Date.now() / 1000;
  for (let i = 0; i < 5; i++) {
    const f = join(dir, `${hex(i)}.${i % 2 ? 'clr' : 'clc'}`);
    writeFileSync(f, Buffer.alloc(1000));
    utimesSync(f, now - 1000 + i * 100, now - 1000 + i * 100); // file i was used after file i-1
  }
  writeFileSync(join(dir, 'notes.txt'), 'the user keeps this');
  writeFileSync(join(dir, `${hex(9)}.clc.999999999.abcd1234.tmp`), 'a dead writer left this');
  writeFileSync(join(dir, `${hex(8)}.clc.${process.pid}.abcd1234.tmp`), 'a live writer is writing this');
  assert.deepEqual(pruneCache(dir, 2500), { removed: 3, freed: 3000 });
  assert.deepEqual(readdirSync(dir).sort(), [`${hex(3)}.clr`, `${hex(4)}.clc`, `${hex(8)}.clc.${process.pid}.abcd1234.tmp`, 'notes.txt'].sort());
  // a bound smaller than the newest file still keeps it
  assert.deepEqual(pruneCache(dir, 10), { removed: 1, freed: 1000 });
  assert.ok(existsSync(join(dir, `${hex(4)}.clc`)));
  assert.deepEqual(clearCache(dir), { removed: 1, freed: 1000 });
  assert.deepEqual(readdirSync(dir).sort(), [`${hex(8)}.clc.${process.pid}.abcd1234.tmp`, 'notes.txt'].sort());
  assert.deepEqual(clearCache(join(dir, 'absent')), { removed: 0, freed: 0 });
});

test('the bound: CONSENSUS_LENS_CACHE_MAX_MB (default 4096 MB, 0 no bound); anything else is an error', () => {
  assert.equal(cacheLimit({}), 4096 * 1024 * 1024);
  assert.equal(cacheLimit({ CONSENSUS_LENS_CACHE_MAX_MB: '1.5' }), 1.5 * 1024 * 1024);
  assert.equal(cacheLimit({ CONSENSUS_LENS_CACHE_MAX_MB: '0' }), Number.POSITIVE_INFINITY);
  assert.throws(() => cacheLimit({ CONSENSUS_LENS_CACHE_MAX_MB: 'lots' }), /CONSENSUS_LENS_CACHE_MAX_MB/);
  assert.throws(() => cacheLimit({ CONSENSUS_LENS_CACHE_MAX_MB: '-1' }), /CONSENSUS_LENS_CACHE_MAX_MB/);
});

function cli(args: string[], env: NodeJS.ProcessEnv) {
  return spawnSync(process.execPath, ['dist/cli.js', ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
}

test('cache info and cache clear on the folder the CLI writes; the folder is held to its bound after each command', () => {
  const dir = scratchDir('cl-cache-cmd-');
  const env = { CONSENSUS_LENS_CACHE_DIR: dir, CONSENSUS_LENS_CACHE_MAX_MB: '0' };
  const info = () => JSON.parse(cli(['cache', 'info', '--json'], env).stdout);
  assert.deepEqual(info(), { dir, files: 0, bytes: 0, limit_bytes: null });
  assert.equal(cli(['index', 'examples/demo-run'], env).status, 0);
  assert.equal(cli(['report', 'test/fixtures/logs/writers/verl-uid', '--json'], env).status, 0);
  const full = info();
  assert.ok(full.files >= 3 && full.bytes > 0, JSON.stringify(full));
  // A bound below what is there: the next command that writes the cache leaves its own file only.
  const small = { ...env, CONSENSUS_LENS_CACHE_MAX_MB: '0.001' };
  assert.equal(cli(['index', 'examples/demo-run'], small).status, 0);
  assert.equal(cli(['score', 'test/fixtures/logs/writers/verl-uid'], small).status, 0);
  const bounded = JSON.parse(cli(['cache', 'info', '--json'], small).stdout);
  assert.equal(bounded.files, 1, JSON.stringify(bounded));
  assert.equal(bounded.limit_bytes, Math.round(0.001 * 1024 * 1024 * 1000) / 1000);
  assert.match(cli(['cache', 'info'], env).stdout, /1 file, [\d.]+ MB; bound none/);
  const c = cli(['cache', 'clear'], env);
  assert.equal(c.status, 0, c.stderr);
  assert.match(c.stdout, /removed 1 file/);
  assert.equal(info().files, 0);
  for (const bad of [['cache'], ['cache', 'purge'], ['cache', 'clear', '--all'], ['cache', 'info', 'x']]) {
    const r = cli(bad, env);
    assert.equal(r.status, 2, bad.join(' '));
    assert.match(r.stderr, /usage: consensus-lens cache info/);
  }
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`sweep --no-cache interrupted by ${signal}: its private cache folder is removed and the process ends by the signal`, async () => {
    const tmp = scratchDir('cl-sweep-signal-');
    const child = spawn(process.execPath, ['dist/cli.js', 'sweep', 'examples/demo-run', '--no-cache', '--kappa', '0:1:0.0005', '--tau', '0.1,0.25,0.5,1'], {
      env: { ...process.env, TMPDIR: tmp },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let lines = 0;
    child.stdout.on('data', (d: Buffer) => (lines += d.toString().split('\n').length - 1));
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.on('close', (code, sig) => res({ code, signal: sig })));
    // Interrupted once the sweep is under way: its folder exists and settings are being written.
    const deadline = Date.now() + 60_000;
    while (!(lines > 0 && readdirSync(tmp).some((n) => n.startsWith('consensus-lens-sweep-')))) {
      assert.ok(Date.now() < deadline, 'the sweep did not start within 60 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill(signal);
    const end = await ended;
    assert.deepEqual(end, { code: null, signal });
    assert.deepEqual(readdirSync(tmp).filter((n) => n.startsWith('consensus-lens-sweep-')), []);
  });
}
