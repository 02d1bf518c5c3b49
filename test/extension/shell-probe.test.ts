// Quoting chosen by how the real shell parses (probeQuoteStyle), not by its executable's name:
// fish through `env` or under another name gets fish quoting, so a hostile folder name stays a
// name; zsh's EQUALS expansion never meets a bare value; `${var}` inside backquotes is refused.
// Needs fish, zsh and dash (scripts/setup-tests.sh installs them; without them the tests that need
// them are skipped, test/tools.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { invocation, probeQuoteStyle, quoteStyleFor, resolveLaunch, validateProfiles, type TerminalProfile, type TrainingProfile } from '../../src/extension/training/profile';
import { quotePosix } from '../../src/extension/training/quote';
import { scratchDir } from '../scratch';
import { findExecutable, skipWithout } from '../tools';

const which = (n: string): string => {
  const p = findExecutable(n);
  assert.ok(p, `${n} is not installed`);
  return p;
};
const HOSTILE = "a\\'; touch PWN; #";

async function launchInFolderNamed(tp: TerminalProfile, folder: string): Promise<{ out: string; pwned: boolean; style: string | null }> {
  const style = await probeQuoteStyle(tp, undefined);
  if (!style) return { out: '', pwned: false, style };
  const profile: TrainingProfile = { name: 'p', command: 'printf %s ${workspaceFolder}' };
  const l = resolveLaunch(profile, { operator: 'core', params: {} }, { workspaceFolder: folder, date: new Date(), gpus: '' }, style);
  const inv = invocation(l.command, tp, undefined);
  const dir = scratchDir('cl-probe-');
  const r = spawnSync(inv.file, inv.args, { encoding: 'utf8', cwd: dir });
  return { out: r.stdout, pwned: existsSync(join(dir, 'PWN')), style };
}

test('fish started through env gets fish quoting (by name it would be POSIX): the folder name stays a name', { skip: skipWithout('fish') }, async () => {
  const tp: TerminalProfile = { path: which('env'), args: [which('fish'), '-c'] };
  assert.equal(quoteStyleFor(tp.path as string), 'posix');
  const r = await launchInFolderNamed(tp, HOSTILE);
  assert.equal(r.style, 'fish');
  assert.equal(r.out, HOSTILE);
  assert.equal(r.pwned, false);
});

test('fish under another name (a link called "sh-wrapper") gets fish quoting', { skip: skipWithout('fish') }, async () => {
  const dir = scratchDir('cl-renamed-');
  const renamed = join(dir, 'sh-wrapper');
  symlinkSync(which('fish'), renamed);
  const r = await launchInFolderNamed({ path: renamed, args: ['-c'] }, HOSTILE);
  assert.deepEqual([r.style, r.out, r.pwned], ['fish', HOSTILE, false]);
});

test('POSIX shells, also through env, probe as POSIX; a program that is no shell is refused', { skip: skipWithout('dash', 'zsh') }, async () => {
  for (const tp of [{ path: which('bash') }, { path: which('dash') }, { path: which('zsh') }, { path: which('env'), args: ['bash', '-c'] }] as TerminalProfile[]) {
    const r = await launchInFolderNamed(tp, HOSTILE);
    assert.deepEqual([r.style, r.out, r.pwned], ['posix', HOSTILE, false], JSON.stringify(tp));
  }
  assert.equal(await probeQuoteStyle({ path: which('env'), args: ['python3', '-c'] }, undefined), null);
  // a wrapper without a command flag (ssh host …) is not run to probe it
  let ran = false;
  assert.equal(await probeQuoteStyle({ path: '/usr/bin/ssh', args: ['gpu-box'] }, undefined, () => true, async () => ((ran = true), { code: 0, stdout: "a'b" })), 'posix');
  assert.equal(ran, false);
});

test('zsh: a bare value starting with = is quoted (EQUALS expansion would turn =ls into a path)', { skip: skipWithout('zsh') }, () => {
  assert.equal(quotePosix('=ls'), "'=ls'");
  assert.equal(quotePosix('a=b'), 'a=b');
  const r = spawnSync(which('zsh'), ['-c', `printf %s ${quotePosix('=ls')}`], { encoding: 'utf8' });
  assert.equal(r.stdout, '=ls');
});

test('profile validation refuses ${variable} inside backquotes', () => {
  const v = validateProfiles([{ name: 'bq', command: 'echo `ls ${runName}`' }, { name: 'ok', command: 'echo $(ls ${runName})' }], []);
  assert.deepEqual(v.profiles.map((p) => p.name), ['ok']);
  assert.match(v.errors.join('\n'), /profile "bq": write \$\{runName\} without quotes or backquotes/);
});
