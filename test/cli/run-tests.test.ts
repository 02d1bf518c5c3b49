// `npm test`'s runner: a summary line instead of pages of TAP (kept in a log file), and nothing
// left in the temporary folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

test('run-tests prints failures and a summary, keeps the TAP, and removes what tests leave in TMPDIR', () => {
  const outer = mkdtempSync(join(tmpdir(), 'cl-runner-'));
  const dir = mkdtempSync(join(outer, 'specs-'));
  try {
    const spec = join(dir, 'leaky.test.ts');
    writeFileSync(
      spec,
      `import { test } from 'node:test';\nimport { mkdtempSync } from 'node:fs';\nimport { tmpdir } from 'node:os';\nimport { join } from 'node:path';\n` +
        `test('passes and leaks a folder', () => { mkdtempSync(join(tmpdir(), 'leak-')); });\ntest('fails', () => { throw new Error('boom here'); });\ntest('passes', () => {});\n`,
    );
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: outer, TEST_RESULTS_DIR: join(dir, 'results') };
    delete env.NODE_TEST_CONTEXT; // a runner of its own, not a subtest of this one
    const r = spawnSync(process.execPath, ['scripts/run-tests.mjs', spec], { encoding: 'utf8', env });
    assert.equal(r.status, 1);
    const lines = r.stdout.trim().split('\n');
    assert.ok(lines.length < 12, r.stdout);
    assert.match(r.stdout, /not ok fails .*\n +boom here/);
    assert.match(r.stdout, /FAILED: 1 test files, 3 tests: 2 passed, 1 failed/);
    assert.match(r.stdout, /the tests left 1 entry \(leak-\w+\); removed/);
    assert.match(r.stdout, /TESTS FAILED in \d+ s; full TAP: .*node\.tap/);
    assert.match(readFileSync(join(dir, 'results', 'node.tap'), 'utf8'), /not ok 2 - fails/);
    // nothing of the run is left in the temporary folder it was given
    assert.deepEqual(readdirSync(outer).filter((n) => !n.startsWith('specs-') && !/^tsx-\d+$/.test(n)), []);
  } finally {
    rmSync(outer, { recursive: true, force: true });
  }
  assert.ok(!existsSync(outer));
});
