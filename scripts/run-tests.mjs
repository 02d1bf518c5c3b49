// Runs every test/**/*.test.ts with node's built-in test runner (TypeScript through tsx), then
// the Python tests (python/run_tests.sh, standard library unittest).
// Node 20's --test has no glob support, so the files are listed here. e2e tests live in
// test/e2e and run from their own script.
//
// Output: the failures and one summary line (files, tests, time) on the terminal; the full TAP
// in test-results/node.tap (for CI logs). Every test runs with TMPDIR set to a fresh folder,
// removed at the end: what a test leaves there is named (a leak to fix) and does not pile up in
// the system's temporary folder.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === 'node_modules' || name === 'e2e' || name === 'fixtures') continue;
    if (statSync(p).isDirectory()) find(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}
const only = process.argv.slice(2);
const files = only.length ? only : find('test').sort();
const started = Date.now();
const tmp = mkdtempSync(join(tmpdir(), 'consensus-lens-tests-'));
// The CLI's persisted run cache (src/logs/cache) goes to this run's folder, never the user's ~/.cache.
const env = { ...process.env, TMPDIR: tmp, TEMP: tmp, TMP: tmp, CONSENSUS_LENS_CACHE_DIR: join(tmp, 'cache') };
const results = process.env.TEST_RESULTS_DIR || 'test-results';
mkdirSync(results, { recursive: true });
const tap = join(results, 'node.tap');
const node = spawnSync(
  process.execPath,
  // A test with no timeout of its own has ten minutes (a hang fails the run instead of stalling CI).
  // Not --test-force-exit: it cuts the summary reporter's last line; tests close what they open.
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=600000', '--test-reporter=./scripts/summary-reporter.mjs', '--test-reporter-destination=stdout', '--test-reporter=tap', `--test-reporter-destination=${tap}`, ...files],
  { stdio: 'inherit', env },
);
// The Python side (logger, reward client, parity through the worker) runs with the whole suite.
let python = { status: 0 };
if (!only.length) {
  python = spawnSync('bash', ['python/run_tests.sh'], { stdio: ['ignore', 'pipe', 'pipe'], env, encoding: 'utf8' });
  const tail = `${python.stderr ?? ''}`.trim().split('\n');
  // unittest's own summary ("Ran N tests in Xs", "OK"/"FAILED (...)"); the whole output on failure
  if (python.status !== 0) process.stdout.write(`${python.stdout}${python.stderr}\n`);
  else process.stdout.write(`python: ${tail.filter((l) => /^Ran |^OK|^FAILED/.test(l)).join(', ')}\n`);
}
// tsx's compile cache (tsx-UID) and the CLI's run cache (CONSENSUS_LENS_CACHE_DIR above) are the runner's own, not a test's
const left = readdirSync(tmp).filter((n) => !/^tsx-\d+$/.test(n) && n !== 'cache');
rmSync(tmp, { recursive: true, force: true });
if (left.length) process.stdout.write(`temporary folder: the tests left ${left.length} ${left.length === 1 ? 'entry' : 'entries'} (${left.slice(0, 8).join(', ')}${left.length > 8 ? ', …' : ''}); removed\n`);
const s = ((Date.now() - started) / 1000).toFixed(0);
process.stdout.write(`${node.status === 0 && python.status === 0 ? 'all tests passed' : 'TESTS FAILED'} in ${s} s; full TAP: ${tap}\n`);
process.exit(node.status === 0 && python.status === 0 ? 0 : 1);
