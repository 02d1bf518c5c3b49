// Run folders a repository can plant (links out of the run, deep or huge trees, dangling links),
// files that fail to read (EIO / ESTALE on a network file system), and records at the edges of
// what JSON can say ("rollouts": [], steps beyond 2^53).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { mkdirSync, readFileSync, symlinkSync, appendFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { collect, groupRec, jsonl, tempDir, write } from './helpers.js';
import { RunIndex, listRunFiles, unsafeRunRoot, type Notice } from '../../src/logs/log-layer.js';
import { runScore } from '../../src/cli/score-command.js';
import { runWatch } from '../../src/cli/watch-command.js';

const require = createRequire(import.meta.url);
const fsp = require('node:fs/promises') as typeof import('node:fs/promises');

async function index(path: string, follow = false): Promise<{ idx: RunIndex; notices: Notice[] }> {
  const notices: Notice[] = [];
  const idx = await RunIndex.open(path, { follow, poll: true, pollMs: 50, idleMs: 300, onNotice: (n) => notices.push(n) });
  return { idx, notices };
}

test('a link to a folder outside the run is never followed (a link to a file inside is read); one notice says so', async () => {
  const outside = tempDir('cl-outside-');
  const { dir, cleanup } = tempDir();
  try {
    write(outside.dir, 'secret.jsonl', jsonl([groupRec(1, 'outside', 2)]));
    write(dir, 'a.jsonl', jsonl([groupRec(1, 'a', 2)]));
    write(dir, 'data/b.jsonl', jsonl([groupRec(1, 'b', 2)]));
    symlinkSync(outside.dir, join(dir, 'p'));
    symlinkSync(join(dir, 'data', 'b.jsonl'), join(dir, 'b-link.jsonl')); // a file link: read (a duplicate here)
    const { groups, notices } = await collect(dir);
    assert.ok(!groups.some((g) => g.questionId === 'outside'), 'nothing read through the folder link');
    assert.deepEqual(groups.map((g) => g.questionId).sort(), ['a', 'b']);
    const linkNotices = notices.filter((n) => /symbolic link to a folder, not followed/.test(n.message));
    assert.equal(linkNotices.length, 1);
    assert.equal(linkNotices[0].file, join(dir, 'p'));
    const { idx, notices: n2 } = await index(dir);
    try {
      assert.ok(!idx.groups().some((g) => g.questionId === 'outside'));
      assert.equal(n2.filter((n) => /not followed/.test(n.message)).length, 1);
    } finally {
      idx.close();
    }
  } finally {
    cleanup();
    outside.cleanup();
  }
});

test('a dangling symbolic link is reported, not silently ignored', async () => {
  const { dir, cleanup } = tempDir();
  try {
    write(dir, 'a.jsonl', jsonl([groupRec(1, 'a', 2)]));
    symlinkSync(join(dir, 'gone.jsonl'), join(dir, 'dangling.jsonl'));
    const { groups, notices } = await collect(dir);
    assert.equal(groups.length, 1);
    const n = notices.find((x) => /dangling symbolic link/.test(x.message));
    assert.ok(n, JSON.stringify(notices));
    assert.equal(n.file, join(dir, 'dangling.jsonl'));
  } finally {
    cleanup();
  }
});

test('the walk is bounded in files and depth, with a notice', async () => {
  const { dir, cleanup } = tempDir();
  try {
    for (let i = 0; i < 10; i++) write(dir, `f${i}.jsonl`, jsonl([groupRec(1, `q${i}`, 1)]));
    write(dir, 'a/b/c/deep.jsonl', jsonl([groupRec(1, 'deep', 1)]));
    const notices: Notice[] = [];
    const files = await listRunFiles(dir, (n) => notices.push(n), undefined, undefined, { maxFiles: 5 });
    assert.equal(files.length, 5);
    assert.ok(notices.some((n) => /more than 5 files; only the first 5 are read/.test(n.message)));
    const n2: Notice[] = [];
    const shallow = await listRunFiles(dir, (n) => n2.push(n), undefined, undefined, { maxDepth: 2 });
    assert.ok(!shallow.some((f) => f.endsWith('deep.jsonl')));
    assert.ok(n2.some((n) => /1 folders deeper than 2 levels not read/.test(n.message)));
    for (let i = 0; i < 6; i++) write(dir, `many/d${i}/x.jsonl`, jsonl([groupRec(1, `m${i}`, 1)]));
    const n3: Notice[] = [];
    const dirs = new Set<string>();
    await listRunFiles(dir, (n) => n3.push(n), undefined, dirs, { maxDirs: 4 });
    assert.equal(dirs.size, 4, 'each folder entered may get a watcher: bounded');
    assert.ok(n3.some((n) => /more than 4 folders; \d+ not read/.test(n.message)));
  } finally {
    cleanup();
  }
});

test('consensusLens.runs cannot point the extension at / or ~: restricted in untrusted workspaces and refused anywhere', () => {
  assert.match(unsafeRunRoot('/') ?? '', /root of the file system/);
  assert.match(unsafeRunRoot(homedir()) ?? '', /home folder/);
  assert.match(unsafeRunRoot(homedir() + '/') ?? '', /home folder/);
  assert.equal(unsafeRunRoot(join(homedir(), 'runs', 'x')), undefined);
  const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
  assert.ok(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations.includes('consensusLens.runs'));
  // the run discovery refuses such a setting before following it
  const src = readFileSync('src/extension/runs/discovery.ts', 'utf8');
  assert.match(src, /const unsafe = unsafeRunRoot\(this\.resolve\(p\)\);\s*if \(unsafe\)[^\n]*not followed/);
});

/** Makes reads of `file` fail with `code` (from byte `from` on), as NFS / Lustre do; returns the undo. */
function failReads(file: string, code: string, from = 0): () => void {
  const open0 = fsp.open;
  const readFile0 = fsp.readFile;
  const err = () => Object.assign(new Error(`${code}: i/o error, read`), { code });
  fsp.open = (async (p: Parameters<typeof open0>[0], ...rest: unknown[]) => {
    const fh = await (open0 as (...a: unknown[]) => ReturnType<typeof open0>)(p, ...rest);
    if (String(p) !== file) return fh;
    const read0 = fh.read.bind(fh);
    (fh as { read: unknown }).read = async (buf: Buffer, off: number, len: number, pos: number) => {
      if (pos >= from) throw err();
      return read0(buf, off, len, pos);
    };
    return fh;
  }) as typeof open0;
  fsp.readFile = (async (p: Parameters<typeof readFile0>[0], ...rest: unknown[]) => {
    if (String(p) === file) throw err();
    return (readFile0 as (...a: unknown[]) => unknown)(p, ...rest);
  }) as typeof readFile0;
  syncBuiltinESMExports();
  return () => {
    fsp.open = open0;
    fsp.readFile = readFile0;
    syncBuiltinESMExports();
  };
}

test('one unreadable file (EIO) does not lose the run: named, skipped, everything else kept (readRun, score)', async () => {
  const { dir, cleanup } = tempDir();
  const bad = join(dir, '2.jsonl');
  try {
    write(dir, '1.jsonl', jsonl([groupRec(1, 'a', 2)]));
    write(dir, '2.jsonl', jsonl([groupRec(2, 'b', 2)]));
    write(dir, '3.jsonl', jsonl([groupRec(3, 'c', 2)]));
    const undo = failReads(bad, 'EIO');
    try {
      const { groups, notices } = await collect(dir);
      assert.deepEqual(groups.map((g) => g.questionId), ['a', 'c']);
      const errs = notices.filter((n) => n.level === 'error');
      assert.equal(errs.length, 1);
      assert.equal(errs[0].file, bad);
      assert.match(errs[0].message, /EIO/);
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      let out = '';
      let err = '';
      stdout.on('data', (c) => (out += c));
      stderr.on('data', (c) => (err += c));
      // Every other group is scored; the exit code says an error-level notice was printed.
      assert.equal(await runScore([dir, '--jobs', '0'], { stdin: new PassThrough(), stdout, stderr }), 1);
      assert.deepEqual(out.trim().split('\n').map((l) => JSON.parse(l).question_id), ['a', 'c']);
      assert.match(err, new RegExp(`${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*EIO`));
    } finally {
      undo();
    }
  } finally {
    cleanup();
  }
});

test('a read error (ESTALE) in the middle of a big file keeps what was read before it', async () => {
  const { dir, cleanup } = tempDir();
  const big = join(dir, 'big.jsonl');
  try {
    // more than one read chunk (1 MiB) of group records
    const lines: Record<string, unknown>[] = [];
    for (let i = 0; i < 400; i++) lines.push({ ...groupRec(1, `q${i}`, 2), prompt: 'x'.repeat(4000) });
    write(dir, 'big.jsonl', jsonl(lines));
    const undo = failReads(big, 'ESTALE', 1 << 20);
    try {
      const { groups, notices } = await collect(dir);
      assert.ok(groups.length > 100 && groups.length < 400, String(groups.length));
      const e = notices.find((n) => n.level === 'error')!;
      assert.match(e.message, /read error after line \d+ \(ESTALE\); the rest of this file is skipped/);
    } finally {
      undo();
    }
  } finally {
    cleanup();
  }
});

test('followed (the index behind watch and the extension): an unreadable file is named once, later files are still read', async () => {
  const { dir, cleanup } = tempDir();
  const bad = join(dir, '2.jsonl');
  write(dir, '1.jsonl', jsonl([groupRec(1, 'a', 2)]));
  write(dir, '2.jsonl', jsonl([groupRec(2, 'b', 2)]));
  const undo = failReads(bad, 'EIO');
  const { idx, notices } = await index(dir, true);
  try {
    write(dir, '3.jsonl', jsonl([groupRec(3, 'c', 2)]));
    const t0 = Date.now();
    while (!idx.groups().some((g) => g.questionId === 'c') && Date.now() - t0 < 8000) await new Promise((r) => setTimeout(r, 25));
    appendFileSync(join(dir, '1.jsonl'), jsonl([groupRec(1, 'a2', 2)]));
    while (!idx.groups().some((g) => g.questionId === 'a2') && Date.now() - t0 < 8000) await new Promise((r) => setTimeout(r, 25));
    // every readable group is there (the order of an appended group against a later file's is
    // not the point here: it depends on whether the watcher saw an append or a rewrite)
    assert.deepEqual(idx.groups().map((g) => g.questionId).sort(), ['a', 'a2', 'c']);
    const errs = notices.filter((n) => n.level === 'error');
    assert.equal(errs.length, 1, JSON.stringify(errs)); // once, not on every rescan
    assert.equal(errs[0].file, bad);
  } finally {
    idx.close();
    undo();
    cleanup();
  }
  // the same through `watch`
  const w = tempDir();
  const bad2 = join(w.dir, '2.jsonl');
  write(w.dir, '1.jsonl', jsonl([groupRec(1, 'a', 2)]));
  write(w.dir, '2.jsonl', jsonl([groupRec(2, 'b', 2)]));
  const undo2 = failReads(bad2, 'EIO');
  const ac = new AbortController();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  const done = runWatch([w.dir, '--poll', '--poll-ms', '50'], { stdin: new PassThrough(), stdout, stderr }, { signal: ac.signal });
  try {
    const t0 = Date.now();
    while (!out.includes('"a"') && Date.now() - t0 < 8000) await new Promise((r) => setTimeout(r, 25));
    write(w.dir, '3.jsonl', jsonl([groupRec(3, 'c', 2)]));
    while (!out.includes('"c"') && Date.now() - t0 < 8000) await new Promise((r) => setTimeout(r, 25));
    ac.abort();
    assert.equal(await done, 0);
    assert.deepEqual(out.trim().split('\n').map((l) => JSON.parse(l).question_id), ['a', 'c']);
    assert.match(err, /2\.jsonl: read error \(EIO\)/);
  } finally {
    ac.abort();
    undo2();
    w.cleanup();
  }
});

test('"rollouts": [] is reported, not dropped silently', async () => {
  const { dir, cleanup } = tempDir();
  try {
    write(dir, 'r.jsonl', jsonl([groupRec(1, 'a', 2), { kind: 'group', step: 1, question_id: 'empty', rollouts: [] }]));
    const { groups, notices } = await collect(dir);
    assert.deepEqual(groups.map((g) => g.questionId), ['a']);
    const n = notices.find((x) => /empty has no roll-outs \("rollouts": \[\]\)/.test(x.message));
    assert.ok(n, JSON.stringify(notices));
    assert.equal(n.line, 2);
    const { idx, notices: n2 } = await index(dir);
    try {
      assert.equal(idx.size, 1);
      assert.ok(n2.some((x) => /has no roll-outs/.test(x.message)));
    } finally {
      idx.close();
    }
  } finally {
    cleanup();
  }
});

test('an integer step beyond 2^53 is reported, never rounded into another step', async () => {
  const { dir, cleanup } = tempDir();
  try {
    write(dir, 'r.jsonl', `{"kind":"group","step":9007199254740993,"question_id":"big","rollouts":[{"response":"x"}]}\n${JSON.stringify(groupRec(1, 'ok', 2))}\n{"input":"p","output":"o","score":1,"step":18014398509481985}\n`);
    const { groups, notices } = await collect(dir);
    assert.deepEqual(groups.map((g) => [g.questionId, g.step]), [['ok', 1]]);
    const n = notices.filter((x) => /beyond 2\^53/.test(x.message));
    assert.deepEqual(n.map((x) => x.line), [1, 3], JSON.stringify(notices));
    write(dir, 'rollout/3.jsonl', '{"input":"p","output":"o","score":1,"step":18014398509481985}\n{"input":"p","output":"o2","score":1,"step":3}\n');
    const v = await collect(join(dir, 'rollout'));
    assert.deepEqual(v.groups.map((g) => [g.step, g.rollouts.length]), [[3, 1]]);
    assert.ok(v.notices.some((x) => /3\.jsonl:1: field "step" is an integer beyond 2\^53/.test(x.message)));
  } finally {
    cleanup();
  }
});

test('a folder named like a log file is walked as a folder, its logs read', async () => {
  const { dir, cleanup } = tempDir();
  try {
    mkdirSync(join(dir, '5.jsonl'));
    write(dir, '5.jsonl/inner.jsonl', jsonl([groupRec(5, 'in', 2)]));
    const { groups, notices } = await collect(dir);
    assert.deepEqual(groups.map((g) => g.questionId), ['in']);
    assert.deepEqual(notices.filter((n) => n.level === 'error'), []);
  } finally {
    cleanup();
  }
});
