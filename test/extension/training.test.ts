// Training launcher: substitution and quoting, profile validation, nvidia-smi parsing,
// and how a command is handed to a shell or a terminal profile. Pure modules, no 'vscode'.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quoteCmd, quoteFish, quotePosix, quotePowerShell, UnquotableError, substitute, quotedVariables, formatParam, formatDate, defaultRunName, type TrainingVariables } from '../../src/extension/training/quote';
import { invocation, invocationShell, parseGpuList, resolveLaunch, terminalProfile, terminalProfileNames, userDefaultShell, validateProfiles, quoteStyleFor, type TrainingProfile } from '../../src/extension/training/profile';
import { describeGpu, interpretNvidiaSmi, lastLines, OutputTail, parseNvidiaSmiCsv } from '../../src/extension/training/gpus';

const FIX = join(import.meta.dirname ?? __dirname, '../fixtures/nvidia-smi');
const fixture = (name: string): string => readFileSync(join(FIX, name), 'utf8');

const HOSTILE = [
  'plain',
  'two words',
  "it's",
  '"double"',
  '$HOME and ${PATH}',
  '`id` and $(id)',
  'line one\nline two',
  'tab\there',
  "'",
  "''",
  '\\',
  'a\\nb',
  '; rm -rf / #',
  '| cat > x && echo',
  '*?[a]~',
  '',
  ' leading and trailing ',
  'ünïcödé ✓',
  '!history',
  '-n',
  // Payloads that ran code before quoting followed the shell: fish reads \' inside single quotes
  // as an escaped quote; cmd.exe runs what follows & outside double quotes.
  "a\\'; touch PWN; #",
  'a\\',
  'proj & calc.exe',
  '%self (echo x) {a,b} ~',
];

/** What a POSIX shell makes of one quoted word: printf prints it back NUL-terminated. */
function throughShell(shell: string, word: string): string {
  const r = spawnSync(shell, ['-c', `printf '%s\\0' ${word}`], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

test('POSIX quoting: every hostile value reaches sh (and bash, dash) as exactly one word', () => {
  const shells = ['/bin/sh', '/bin/bash', '/bin/dash'].filter((s) => existsSync(s));
  assert.ok(shells.length > 0);
  for (const shell of shells) {
    for (const v of HOSTILE) assert.equal(throughShell(shell, quotePosix(v)), v + '\0', `${shell}: ${JSON.stringify(v)}`);
    // All of them in one command line: still one word each, in order.
    const r = spawnSync(shell, ['-c', `printf '%s\\0' ${HOSTILE.map(quotePosix).join(' ')}`], { encoding: 'utf8' });
    assert.equal(r.stdout, HOSTILE.map((v) => v + '\0').join(''));
  }
});

/** The real shells installed here, each with the quoting the launcher uses for it. */
const REAL_SHELLS = ['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'fish']
  .map((n) => ['/bin/', '/usr/bin/'].map((d) => d + n).find((p) => existsSync(p)))
  .filter((p): p is string => p !== undefined);

test('every installed shell (sh, bash, dash, zsh, ksh, mksh, fish) gets each hostile value as exactly one word, with the quoting the launcher picks for it', () => {
  assert.ok(REAL_SHELLS.length >= 3, `shells found: ${REAL_SHELLS.join(', ')}`);
  for (const shell of REAL_SHELLS) {
    const style = quoteStyleFor(shell);
    assert.ok(style === 'posix' || style === 'fish', shell);
    const cmd = `printf '%s\\0' ${HOSTILE.map((v) => substitute('${runName}', { ...VARS, runName: v }, style)).join(' ')}`;
    const dir = scratchDir('cl-quote-');
    const inv = invocation(cmd, { path: shell }, undefined);
    const r = spawnSync(inv.file, inv.args, { encoding: 'utf8', cwd: dir });
    assert.equal(r.status, 0, `${shell}: ${r.stderr}`);
    assert.equal(r.stdout, HOSTILE.map((v) => v + '\0').join(''), shell);
    assert.ok(!existsSync(join(dir, 'PWN')), `${shell} ran the payload`);
  }
});

test('fish: a folder named a\\\'; touch PWN; # stays a folder name (the POSIX form would run touch)', { skip: skipWithout('fish') }, () => {
  const fish = findExecutable('fish') as string;
  const dir = scratchDir('cl-fish-');
  const profile: TrainingProfile = { name: 'f', command: 'printf %s ${workspaceFolder}' };
  const style = quoteStyleFor(fish);
  assert.equal(style, 'fish');
  const l = resolveLaunch(profile, { operator: 'core', params: {} }, { workspaceFolder: "a\\'; touch PWN; #", date: new Date(), gpus: '' }, style!);
  const inv = invocation(l.command, { path: fish }, undefined);
  const r = spawnSync(inv.file, inv.args, { encoding: 'utf8', cwd: dir });
  assert.equal(r.stdout, "a\\'; touch PWN; #");
  assert.ok(!existsSync(join(dir, 'PWN')));
  assert.equal(quoteFish("it's"), "'it\\'s'");
  assert.equal(quoteFish('0.4'), '0.4');
  assert.equal(quoteFish(''), "''");
});

test('cmd.exe: values double-quoted (& | < > stay literal), unquotable ones refused; the command passed verbatim with /d /s /c', () => {
  assert.equal(quoteStyleFor('C:\\Windows\\System32\\cmd.exe'), 'cmd');
  assert.equal(quoteCmd('proj & calc.exe'), '"proj & calc.exe"');
  assert.equal(quoteCmd('C:\\work\\proj'), 'C:\\work\\proj');
  assert.equal(quoteCmd('C:\\my proj\\'), '"C:\\my proj\\\\"');
  assert.equal(quoteCmd('0,1'), '"0,1"');
  for (const bad of ['50%', '%PATH%', 'say "hi"', 'a\nb', 'wow!']) assert.throws(() => quoteCmd(bad), UnquotableError, bad);
  assert.equal(substitute('train ${workspaceFolder}', { ...VARS, workspaceFolder: 'proj & calc.exe' }, 'cmd'), 'train "proj & calc.exe"');
  assert.deepEqual(invocation('train "a b"', { path: 'C:\\Windows\\System32\\cmd.exe', args: ['/c'] }, undefined), { file: 'C:\\Windows\\System32\\cmd.exe', args: ['/d', '/s', '/c', '"train "a b""'], env: {}, verbatim: true });
  assert.equal(invocation('x', undefined, 'C:\\Windows\\System32\\cmd.exe').args.join(' '), '/d /s /c "x"');
});

test('shells the launcher cannot quote for (tcsh, csh, nu, xonsh, …) are refused, not quoted as POSIX', () => {
  for (const s of ['/usr/bin/tcsh', '/bin/csh', 'nu', '/usr/local/bin/xonsh', 'elvish']) assert.equal(quoteStyleFor(s), null, s);
  for (const s of ['ssh', 'srun', '/usr/bin/env']) assert.equal(quoteStyleFor(s), 'posix', s);
  // Why tcsh is refused: a line break inside single quotes is a syntax error there.
  const tcsh = ['/usr/bin/tcsh', '/bin/tcsh'].find((p) => existsSync(p));
  if (tcsh) assert.notEqual(spawnSync(tcsh, ['-c', `printf '%s' ${quotePosix('a\nb')}`], { encoding: 'utf8' }).stdout, 'a\nb');
});

test('the default shell of a profile without terminal comes from user-level sources only', () => {
  const profiles = { fish: { path: '/usr/bin/fish' }, zsh: { path: ['/nope/zsh', '/usr/bin/zsh'] } };
  assert.equal(userDefaultShell('zsh', profiles, '/bin/bash', (p) => p === '/usr/bin/zsh'), '/usr/bin/zsh');
  assert.equal(userDefaultShell(undefined, profiles, '/bin/bash'), '/bin/bash');
  assert.equal(userDefaultShell('missing', profiles, '/bin/ksh'), '/bin/ksh');
  assert.equal(userDefaultShell(undefined, profiles, undefined), undefined);
  const src = readFileSync(join(import.meta.dirname ?? __dirname, '../../src/extension/training/training-commands.ts'), 'utf8');
  assert.ok(!/vscode\.env\.shell/.test(src), 'the launcher must not read vscode.env.shell (a workspace can set it)');
});

test('POSIX quoting: safe values stay bare, others are single-quoted', () => {
  assert.equal(quotePosix('0.4'), '0.4');
  assert.equal(quotePosix('runs/core-k0.4_20261129'), 'runs/core-k0.4_20261129');
  assert.equal(quotePosix('0,1,3'), '0,1,3');
  assert.equal(quotePosix(''), "''");
  assert.equal(quotePosix('a b'), "'a b'");
  assert.equal(quotePosix("it's"), "'it'\\''s'");
  assert.equal(quotePosix('$x'), "'$x'");
  assert.equal(quotePosix('`x`'), "'`x`'");
  assert.equal(quotePosix('a\nb'), "'a\nb'");
});

test('PowerShell quoting doubles single quotes', () => {
  assert.equal(quotePowerShell("it's $x"), "'it''s $x'");
  assert.equal(quotePowerShell(''), "''");
  assert.equal(quotePowerShell('0.4'), '0.4');
  assert.equal(quoteStyleFor('/usr/bin/pwsh'), 'powershell');
  assert.equal(quoteStyleFor('C:\\Windows\\powershell.exe'), 'powershell');
  assert.equal(quoteStyleFor('/bin/bash'), 'posix');
});

const VARS: TrainingVariables = { operator: 'core', kappa: '0.4', tau: '0.25', alpha: '0.1', omega: '5', lambda: '0.9', gpus: '0,1', runName: 'my run', workspaceFolder: '/w s', date: '20261129-210000' };

test('substitution: known variables quoted in commands, verbatim elsewhere; others left for the shell', () => {
  assert.equal(substitute('train --op ${operator} --k ${kappa} --name ${runName} --home ${HOME}', VARS, 'posix'), "train --op core --k 0.4 --name 'my run' --home ${HOME}");
  assert.equal(substitute('${workspaceFolder}/runs/${runName}', VARS, null), '/w s/runs/my run');
  assert.equal(substitute('${nope} $kappa ${kappa', VARS, 'posix'), '${nope} $kappa ${kappa');
  // Substituted values are not substituted again.
  assert.equal(substitute('${runName}', { ...VARS, runName: '${kappa}' }, null), '${kappa}');
});

test('substitution through a real shell: hostile run names and folders arrive intact', () => {
  for (const v of HOSTILE) {
    const cmd = substitute('printf "%s\\0" ${runName} ${workspaceFolder}', { ...VARS, runName: v, workspaceFolder: v + 'x' }, 'posix');
    const r = spawnSync('/bin/sh', ['-c', cmd], { encoding: 'utf8' });
    assert.equal(r.stdout, `${v}\0${v}x\0`, JSON.stringify(v));
  }
});

test('variables inside quotes in a command are found', () => {
  assert.deepEqual(quotedVariables('train --name "${runName}" --k ${kappa}'), ['runName']);
  assert.deepEqual(quotedVariables("echo '${kappa}'"), ['kappa']);
  assert.deepEqual(quotedVariables('echo \\"${kappa} "x"'), []);
  assert.deepEqual(quotedVariables('echo "a" ${kappa} "${HOME}"'), []);
  assert.deepEqual(quotedVariables("echo \"it's\" ${tau}"), []);
});

test('parameter text and dates', () => {
  assert.equal(formatParam(0.4), '0.4');
  assert.equal(formatParam(0.1 + 0.2), '0.3');
  assert.equal(formatParam(5), '5');
  assert.equal(formatParam(undefined), '');
  assert.equal(formatDate(new Date(2026, 10, 29, 9, 5, 7)), '20261129-090507');
  assert.equal(defaultRunName('verl / gpu box', 'core', '20261129-090507'), 'verl-gpu-box-core-20261129-090507');
});

test('GPU lists', () => {
  assert.deepEqual(parseGpuList('0,1'), { ok: true, value: '0,1' });
  assert.deepEqual(parseGpuList(' 0 1  3 '), { ok: true, value: '0,1,3' });
  assert.deepEqual(parseGpuList('0-3'), { ok: true, value: '0,1,2,3' });
  assert.deepEqual(parseGpuList('all'), { ok: true, value: 'all' });
  assert.deepEqual(parseGpuList(''), { ok: true, value: '' });
  assert.deepEqual(parseGpuList('GPU-5b1c3a52-8d1e,1'), { ok: true, value: 'GPU-5b1c3a52-8d1e,1' });
  for (const bad of ['a', '0,,1', '-1', '1-', '3-1', '0,0', '0;1', '$(id)', '1.5']) assert.equal(parseGpuList(bad).ok, false, bad);
});

const TERMINALS = ['bash', 'zsh', 'gpu-ssh'];

test('profile validation: a good profile passes', () => {
  const r = validateProfiles([{ name: 'local', command: 'python train.py --k ${kappa}', cwd: '${workspaceFolder}', env: { CUDA_VISIBLE_DEVICES: '${gpus}', N: 4 }, terminal: 'gpu-ssh', logDir: 'runs/${runName}', gpus: '0,1' }], TERMINALS);
  assert.deepEqual(r.errors, []);
  assert.equal(r.profiles.length, 1);
  assert.deepEqual(r.profiles[0].env, { CUDA_VISIBLE_DEVICES: '${gpus}', N: '4' });
  assert.equal(r.profiles[0].gpus, '0,1');
});

test('profile validation: each error is named, good profiles survive bad ones', () => {
  const r = validateProfiles(
    [
      { name: 'no-command', cwd: '/tmp' },
      { name: 'blank', command: '   ' },
      { name: 'term', command: 'x', terminal: 'slurm' },
      { name: 'gpus', command: 'x', gpus: '0,a' },
      { name: 'gpus2', command: 'x', gpus: { a: 1 } },
      { name: 'quoted', command: 'x --name "${runName}"' },
      { name: 'env', command: 'x', env: { 'BAD-NAME': 'v', OK: { nested: 1 } } },
      { name: 'extra', command: 'x', shell: 'bash' },
      { command: 'x' },
      'not an object',
      { name: 'ok', command: 'x' },
      { name: 'ok', command: 'y' },
    ],
    TERMINALS,
  );
  const has = (re: RegExp): void => assert.ok(r.errors.some((e) => re.test(e)), `${re} in ${JSON.stringify(r.errors, null, 1)}`);
  has(/profile "no-command": missing "command"/);
  has(/profile "blank": missing "command"/);
  has(/profile "term": unknown terminal profile "slurm" \(known: bash, zsh, gpu-ssh\)/);
  has(/profile "gpus": bad GPU list: "a" is not a GPU index/);
  has(/profile "gpus2": bad GPU list/);
  has(/profile "quoted": write \$\{runName\} without quotes/);
  has(/profile "env": environment variable name "BAD-NAME"/);
  has(/profile "env": environment variable OK must be a string/);
  has(/profile "extra": unknown field "shell"/);
  has(/profile #9: missing "name"/);
  has(/profile #10: not an object/);
  has(/profile "ok": the name is used by another profile/);
  assert.deepEqual(r.profiles.map((p) => p.name), ['ok']);
  assert.deepEqual(validateProfiles({ name: 'x' }, []).errors, ['consensusLens.training.profiles must be an array of profiles']);
  assert.deepEqual(validateProfiles(undefined, []), { profiles: [], errors: [] });
  assert.match(validateProfiles([{ name: 't', command: 'x', terminal: 'a' }], []).errors[0], /no terminal.integrated.profiles are configured/);
});

test('resolveLaunch: command quoted, cwd/env/logDir verbatim, CONSENSUS_LENS_* exported', () => {
  const profile: TrainingProfile = { name: 'p', command: 'python t.py --name ${runName} --k ${kappa} --op ${operator} --gpus ${gpus}', cwd: '${workspaceFolder}/sub dir', env: { CUDA_VISIBLE_DEVICES: '${gpus}', TAG: '${runName}-${tau}' }, logDir: 'runs/${runName}' };
  const r = resolveLaunch(profile, { operator: 'core', params: { kappa: 0.4, tau: 0.25, alpha: 0.1, omega: 5, lambda: 0.9 } }, { workspaceFolder: '/ws', date: new Date(2026, 0, 2, 3, 4, 5), gpus: '0,1', runName: "it's" }, 'posix');
  assert.equal(r.command, "python t.py --name 'it'\\''s' --k 0.4 --op core --gpus 0,1");
  assert.equal(r.cwd, '/ws/sub dir');
  assert.equal(r.logDir, "/ws/sub dir/runs/it's");
  assert.equal(r.env.CUDA_VISIBLE_DEVICES, '0,1');
  assert.equal(r.env.TAG, "it's-0.25");
  assert.equal(r.env.CONSENSUS_LENS_KAPPA, '0.4');
  assert.equal(r.env.CONSENSUS_LENS_OPERATOR, 'core');
  assert.equal(r.env.CONSENSUS_LENS_RUN_NAME, "it's");
  assert.equal(r.env.CONSENSUS_LENS_LOG_DIR, "/ws/sub dir/runs/it's");
  assert.equal(r.env.PYTHONUNBUFFERED, '1');
  const d = resolveLaunch({ name: 'my prof', command: 'x' }, { operator: 'majority', params: {} }, { workspaceFolder: '/ws', date: new Date(2026, 0, 2, 3, 4, 5), gpus: '' }, 'posix');
  assert.equal(d.runName, 'my-prof-majority-20260102-030405');
  assert.equal(d.cwd, '/ws');
  assert.equal(d.logDir, null);
  assert.equal(d.variables.kappa, '');
});

test('invocation: default shell, known shells get -c, wrappers get the command last', () => {
  assert.deepEqual(invocation('echo hi', undefined, '/bin/bash'), { file: '/bin/bash', args: ['-c', 'echo hi'], env: {} });
  assert.deepEqual(invocation('echo hi', undefined, '/usr/bin/fish').file, '/bin/sh');
  assert.deepEqual(invocation('echo hi', undefined, undefined).file, '/bin/sh');
  assert.deepEqual(invocation('echo hi', { path: 'bash', args: ['-l'] }, undefined).args, ['-l', '-c', 'echo hi']);
  assert.deepEqual(invocation('echo hi', { path: 'bash', args: ['-lc'] }, undefined).args, ['-lc', 'echo hi']);
  assert.deepEqual(invocation('echo hi', { path: 'ssh', args: ['-t', 'gpu01'] }, undefined).args, ['-t', 'gpu01', 'echo hi']);
  assert.deepEqual(invocation('echo hi', { path: 'pwsh' }, undefined).args, ['-Command', 'echo hi']);
  assert.equal(invocation('x', { path: ['/nope/zsh', '/bin/sh'] }, undefined, (p) => p === '/bin/sh').file, '/bin/sh');
  // The quoting follows the shell that parses the command: a PowerShell default shell on Linux is
  // not used (sh is, with POSIX quoting); on Windows it is, with PowerShell quoting.
  assert.equal(invocationShell(undefined, '/usr/bin/pwsh'), '/bin/sh');
  assert.deepEqual(invocation('x', undefined, '/usr/bin/pwsh').args, ['-c', 'x']);
  assert.equal(quoteStyleFor(invocationShell(undefined, 'C:\\Program Files\\PowerShell\\7\\pwsh.exe')), 'powershell');
  assert.deepEqual(invocation('x', undefined, 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe').args, ['-Command', 'x']);
  assert.equal(invocationShell({ path: 'ssh', args: ['gpu01'] }, '/bin/zsh'), 'ssh');
  assert.equal(quoteStyleFor(invocationShell({ path: 'ssh' }, undefined)), 'posix');
  const names = terminalProfileNames({ bash: { path: 'bash' }, hidden: null, tmux: { path: ['tmux'], args: ['new'] }, bad: { args: [] } });
  assert.deepEqual(names, ['bash', 'tmux']);
  assert.deepEqual(terminalProfile({ w: { path: 'sh', args: ['-e'], env: { A: 'b', B: null, C: 3 } } }, 'w'), { path: 'sh', args: ['-e'], env: { A: 'b', B: null } });
  assert.equal(terminalProfile({ w: null }, 'w'), undefined);
});

test('nvidia-smi: four A100s', () => {
  const q = interpretNvidiaSmi({ code: 0, stdout: fixture('a100x4.csv'), stderr: '' });
  assert.equal(q.kind, 'gpus');
  if (q.kind !== 'gpus') return;
  assert.equal(q.gpus.length, 4);
  assert.deepEqual(q.gpus[1], { index: 1, uuid: 'GPU-6c2d4b63-9e2f-0a3c-4d5e-2f3a4b5c6d7e', name: 'NVIDIA A100-SXM4-80GB', memoryUsed: 78211, memoryTotal: 81920, utilization: 100 });
  assert.deepEqual(describeGpu(q.gpus[0]), { label: 'GPU 0: NVIDIA A100-SXM4-80GB', description: '1.0/80.0 GiB used · 7% busy' });
});

test('nvidia-smi: header and units, N/A fields, names with commas', () => {
  const a = parseNvidiaSmiCsv(fixture('with-header-units.csv'));
  assert.deepEqual(a.gpus.map((g) => [g.index, g.memoryUsed, g.memoryTotal, g.utilization]), [[0, 512, 24564, 3], [1, 23001, 24564, 97]]);
  assert.deepEqual(a.skipped, []);
  const b = parseNvidiaSmiCsv(fixture('not-supported.csv'));
  assert.deepEqual(b.gpus[0], { index: 0, uuid: 'GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d', name: 'NVIDIA H100 80GB HBM3', memoryUsed: null, memoryTotal: null, utilization: null });
  assert.equal(b.gpus[1].name, 'NVIDIA H100, MIG 1g.10gb');
  assert.equal(b.gpus[1].memoryTotal, 9984);
  assert.equal(describeGpu(b.gpus[0]).description, 'memory n/a · utilisation n/a');
});

test('nvidia-smi: no GPUs, a failing driver, a missing command, garbage', () => {
  assert.deepEqual(interpretNvidiaSmi({ code: 6, stdout: fixture('no-devices.txt'), stderr: '' }), { kind: 'none', message: 'nvidia-smi found no GPU' });
  const f = interpretNvidiaSmi({ code: 9, stdout: fixture('driver-failure.txt'), stderr: '' });
  assert.equal(f.kind, 'unavailable');
  assert.match(f.kind === 'unavailable' ? f.message : '', /^nvidia-smi failed \(exit 9\): NVIDIA-SMI has failed because it couldn't communicate/);
  assert.deepEqual(interpretNvidiaSmi({ code: null, stdout: '', stderr: '', error: 'spawn nvidia-smi ENOENT' }), { kind: 'unavailable', message: 'nvidia-smi is not installed' });
  assert.equal(interpretNvidiaSmi({ code: 0, stdout: 'hello, world\n', stderr: '' }).kind, 'unavailable');
  assert.equal(interpretNvidiaSmi({ code: 0, stdout: '\n', stderr: '' }).kind, 'none');
});

test('output tail: last lines without colours or carriage-return progress', () => {
  const t = new OutputTail(64);
  for (let i = 0; i < 100; i++) t.push(`line ${i}\n`);
  assert.deepEqual(t.lines(3), ['line 97', 'line 98', 'line 99']);
  const u = new OutputTail();
  u.push('\u001b[31mred\u001b[0m\r\nprogress 10%\rprogress 100%\nTraceback: boom');
  assert.deepEqual(u.lines(5), ['red', 'progress 10%', 'progress 100%', 'Traceback: boom']);
  assert.deepEqual(lastLines('a\nb\n', 5), ['a', 'b']);
});

// ---- the job's process (job-process.ts) -------------------------------------------------------
import { JobProcess, jobEnv, signalExitCode } from '../../src/extension/training/job-process';

function runJob(command: string, opts: { stopWhen?: (out: string) => boolean; env?: Record<string, string>; outputFile?: string } = {}): Promise<{ code: number; signal: NodeJS.Signals | null; error?: string; out: string; proc: JobProcess }> {
  return new Promise((resolve) => {
    let out = '';
    const proc: JobProcess = new JobProcess(invocation(command, undefined, '/bin/sh'), { cwd: tmpdir(), env: jobEnv(process.env, {}, opts.env ?? {}), outputFile: opts.outputFile, killAfterMs: 2000 }, {
      onOutput: (s) => {
        out += s;
        if (opts.stopWhen?.(out)) proc.stop();
      },
      onExit: (code, signal, error) => resolve({ code, signal, error, out, proc }),
    });
    proc.start();
  });
}

test('job process: the exit code, stdout and stderr, the last lines, the output file', async () => {
  const dir = scratchDir('cl-job-');
  const file = join(dir, 'jobs', 'out.log');
  const r = await runJob('for i in 1 2 3 4 5; do echo "step $i"; done; echo "boom: nan" >&2; exit 3', { outputFile: file });
  assert.equal(r.code, 3);
  assert.equal(r.signal, null);
  assert.deepEqual(r.proc.tail.lines(2), ['step 5', 'boom: nan']);
  assert.equal(r.proc.stopRequested, false);
  assert.equal(r.proc.running, false);
  // The file is closed right after the exit: wait for its last write to land.
  for (let i = 0; i < 100 && !(existsSync(file) && readFileSync(file, 'utf8').endsWith('boom: nan\n')); i++) await new Promise((res) => setTimeout(res, 50));
  assert.match(readFileSync(file, 'utf8'), /step 1\n[\s\S]*boom: nan\n$/);
  assert.equal((await runJob('true')).code, 0);
});

test('job process: stop ends the whole process group (children too) with SIGTERM → 143', async () => {
  const dir = scratchDir('cl-job-');
  const pidFile = join(dir, 'child.pid');
  const r = await runJob(`sleep 300 & echo $! > ${quotePosix(pidFile)}; echo started; wait`, { stopWhen: (o) => o.includes('started') });
  assert.equal(r.proc.stopRequested, true);
  assert.equal(r.signal, 'SIGTERM');
  assert.equal(r.code, 143);
  const child = Number(readFileSync(pidFile, 'utf8'));
  // The background sleep was in the group: it is gone (or a zombie being reaped) once we look.
  let alive = true;
  for (let i = 0; i < 50 && alive; i++) {
    try {
      process.kill(child, 0);
      const stat = readFileSync(`/proc/${child}/stat`, 'utf8');
      alive = !/^\d+ \([^)]*\) Z/.test(stat);
    } catch {
      alive = false;
    }
    if (alive) await new Promise((res) => setTimeout(res, 100));
  }
  assert.equal(alive, false, 'the job\'s child process was stopped with it');
  assert.equal(signalExitCode('SIGKILL'), 137);
});

test('job process: a program that does not exist ends with 127 and says why', async () => {
  const r = await new Promise<{ code: number; error?: string }>((resolve) => {
    new JobProcess({ file: '/nonexistent/train', args: [], env: {} }, { cwd: tmpdir(), env: {} }, { onOutput: () => {}, onExit: (code, _s, error) => resolve({ code, error }) }).start();
  });
  assert.equal(r.code, 127);
  assert.match(r.error ?? '', /could not start \/nonexistent\/train/);
});

test('job environment: VS Code variables dropped, terminal profile env (null unsets), launch env wins; values reach the job intact', async () => {
  const env = jobEnv({ PATH: '/bin', VSCODE_IPC_HOOK: 'x', ELECTRON_RUN_AS_NODE: '1', HOME: '/h', DROP: 'me' }, { DROP: null, FROM_PROFILE: 'p', CONSENSUS_LENS_KAPPA: 'profile' }, { CONSENSUS_LENS_KAPPA: '0.4' });
  assert.deepEqual(env, { PATH: '/bin', HOME: '/h', FROM_PROFILE: 'p', CONSENSUS_LENS_KAPPA: '0.4' });
  const hostile = "a 'b' \"c\" $d `e`\nf";
  const r = await runJob('printf "%s|%s" "$CONSENSUS_LENS_RUN_NAME" "$CONSENSUS_LENS_KAPPA"', { env: { CONSENSUS_LENS_RUN_NAME: hostile, CONSENSUS_LENS_KAPPA: '0.4' } });
  assert.equal(r.out, `${hostile}|0.4`);
});

import { ignoredUserValue, settingsFiles, setsKey } from '../../src/extension/training/settings-files';
import { scratchDir } from '../scratch';
import { findExecutable, skipWithout } from '../tools';

test('machine-scoped settings in a remote window: a User-settings value is ignored the same way every time, unless the Remote settings set the key', () => {
  const key = 'consensusLens.training.profiles';
  const user = '{\n  // mine\n  "consensusLens.training.profiles": [{"name": "a", "command": "x"}]\n}';
  const machine = '{ "consensusLens.training.nvidiaSmi": "/usr/bin/nvidia-smi" }';
  assert.equal(ignoredUserValue(key, true, user, machine), true);
  assert.equal(ignoredUserValue(key, true, user, null), true);
  assert.equal(ignoredUserValue(key, true, user, '{"consensusLens.training.profiles": []}'), false);
  assert.equal(ignoredUserValue(key, false, user, null), false); // a local window reads the User settings
  assert.equal(ignoredUserValue(key, true, null, null), false);
  assert.equal(setsKey('{"consensusLens.training.profilesX": 1}', key), false);
  assert.deepEqual(settingsFiles('/home/u/.local/share/code-server/User/globalStorage/pub.consensus-lens'), {
    user: '/home/u/.local/share/code-server/User/settings.json',
    machine: '/home/u/.local/share/code-server/Machine/settings.json',
  });
});
