// Runs every test/**/*.test.ts with node's built-in test runner (TypeScript through tsx), then
// the Python tests (python/run_tests.sh, standard library unittest).
// Node 20's --test has no glob support, so the files are listed here. e2e tests live in
// test/e2e and run from their own script.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
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
// The CLI's persisted run cache (src/logs/cache) goes to a folder of this run, never the user's ~/.cache.
const cacheDir = mkdtempSync(join(tmpdir(), 'cl-test-cache-'));
const node = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files], { stdio: 'inherit', env: { ...process.env, CONSENSUS_LENS_CACHE_DIR: cacheDir } });
rmSync(cacheDir, { recursive: true, force: true });
// The Python side (logger, reward client, parity through the worker) runs with the whole suite.
const python = only.length ? { status: 0 } : spawnSync('bash', ['python/run_tests.sh'], { stdio: 'inherit' });
process.exit(node.status === 0 && python.status === 0 ? 0 : 1);
