// What a user reads on stderr: file and line, plain words (never a raw errno, never "undefined"),
// and the progress line (on a terminal, or with --progress), erased at the end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { spawnSync } from 'node:child_process';
import { Progress } from '../../src/cli/progress';
import { plainError } from '../../src/cli/error-lines';
import { emptyReadStats } from '../../src/logs/log-layer';

function cli(args: string[]) {
  const r = spawnSync(process.execPath, ['dist/cli.js', ...args], { encoding: 'utf8', input: '' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('errors name the path in plain words: no raw ENOENT/EISDIR, no "undefined"', () => {
  const cases: [string[], RegExp][] = [
    [['report', 'examples/demo-run', '--html', '/nonexistent/dir/x.html'], /\/nonexistent\/dir\/x\.html: no such file or folder/],
    [['report', 'examples/demo-run', '--html', '/'], /\/: is a folder, not a file/],
    [['score', '/nonexistent'], /\/nonexistent: no such file or folder/],
    [['extract', '/nonexistent'], /\/nonexistent: no such file or folder/],
    [['equal', '--jsonl', '/nonexistent'], /\/nonexistent: no such file or folder/],
    [['health', 'examples/demo-run', '--tau', '0'], /tau = 0 is outside \(0, 1000000\]/],
    [['sweep', 'examples/demo-run', '--kappa', '0.1,', '--jobs', '0'], /--kappa 0\.1,: expected a,b,c/],
  ];
  for (const [args, re] of cases) {
    const r = cli(args);
    assert.notEqual(r.code, 0, args.join(' '));
    assert.match(r.err, re, args.join(' '));
    assert.doesNotMatch(r.err, /\bE[A-Z]{3,}\b|undefined|\[object/, args.join(' '));
  }
  assert.equal(plainError(Object.assign(new Error("EACCES: permission denied, open '/x/y'"), { code: 'EACCES' })), '/x/y: permission denied');
});

test('a malformed line is named file:line, and the run still reports', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cl-msg-'));
  try {
    const file = join(dir, 'a.jsonl');
    writeFileSync(file, ['{"kind":"group","step":0,"question_id":"q","rollouts":[{"response":"\\\\boxed{1}"}]}', '{"kind":"group","step":0,', '{"kind":"rollout","step":0,"question_id":"r"}'].join('\n') + '\n');
    const r = cli(['report', file]);
    assert.equal(r.code, 3);
    assert.match(r.err, /a\.jsonl:2: malformed JSON/);
    assert.match(r.err, /a\.jsonl:3: .*"response"/);
    assert.match(r.err, /2 of 3 lines skipped/);
    assert.match(r.out, /1 step, 1 group, 1 roll-out;/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('progress: nothing on a pipe by default; --progress prints lines on a pipe', () => {
  const quiet = cli(['score', 'examples/demo-run', '--jobs', '0']);
  assert.equal(quiet.err, '');
  // read from the files (bytes read of the run's size); from the run's cache, groups only
  const loud = cli(['score', 'examples/demo-run', '--jobs', '0', '--progress', '--no-cache']);
  assert.equal(loud.code, 0);
  assert.match(loud.err, /consensus-lens: 36 groups, [\d.]+ MiB of [\d.]+ MiB \(100%\), [\d.]+ groups\/s \(done\)\n$/);
  assert.match(cli(['score', 'examples/demo-run', '--jobs', '0', '--progress']).err, /consensus-lens: 36 groups, [\d.]+ groups\/s \(done\)\n$/);
  for (const c of ['report', 'health', 'sweep']) {
    const r = cli([c, 'examples/demo-run', '--jobs', '0', '--progress', ...(c === 'sweep' ? ['--kappa', '0.1,0.5'] : [])]);
    assert.equal(r.code, 0, `${c}: ${r.err}`);
    assert.match(r.err, /36 groups, .* \(done\)/, c);
  }
});

test('progress on a terminal: one line rewritten in place, with rate and time left, erased at the end', () => {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d) => (text += d));
  const stats = { ...emptyReadStats(), bytes: 1 << 20, totalBytes: 4 << 20 };
  // The start is given, so the rate cannot depend on how long the test took to get here.
  const start = Date.now();
  const p = new Progress(out, stats, true, start);
  const line = p.line(start + 2000);
  p.groups = 10;
  assert.match(p.line(start + 2000), /^consensus-lens: 10 groups, 1\.0 MiB of 4\.0 MiB \(25%\), 5\.0 groups\/s, 6 s left$/);
  assert.match(line, /0 groups/);
  p.tick();
  p.end();
  assert.ok(text.startsWith('\r\x1b[2K'), JSON.stringify(text));
  assert.ok(text.endsWith('\r\x1b[2K'), 'erased at the end');
  assert.ok(!text.includes('\n'), 'never scrolls the terminal');
});
