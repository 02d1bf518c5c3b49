// The strict command line: a misspelled or misplaced flag, a missing value, a number that is not
// decimal are usage errors (exit 2) with a suggestion, never the defaults used silently.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { COMMAND_DEFS, commandHelp, formatNumber, optionsOf, parseCommand, UsageError, type Command } from '../../src/cli/args';
import { DEFAULT_PARAMS, PARAM_SPECS } from '../../src/engine';

function cli(args: string[], input = '') {
  const r = spawnSync(process.execPath, ['dist/cli.js', ...args], { encoding: 'utf8', input, timeout: 30_000 });
  return { code: r.status, out: r.stdout, err: r.stderr, signal: r.signal };
}

test('a misspelled flag is a usage error with "did you mean", not the default output', () => {
  const r = cli(['score', 'examples/demo-run', '--operators', 'core', '--kapa', '0.3']);
  assert.equal(r.code, 2);
  assert.equal(r.out, '');
  assert.match(r.err, /unknown flag --kapa; did you mean --kappa\?/);
});

test('a flag the command does not take is a usage error naming the commands that do', () => {
  const r = cli(['health', '--max-group-size', '20', 'examples/demo-run']);
  assert.equal(r.code, 2);
  assert.match(r.err, /health does not take --max-group-size \(score, sweep, report, index, serve do\)/);
  assert.equal(cli(['score', 'examples/demo-run', '--json']).code, 2);
});

test('an unknown flag before PATH does not take PATH as its value and read stdin', () => {
  // stdin is left open (no input): a hang would hit the timeout and give no exit code
  const r = spawnSync(process.execPath, ['dist/cli.js', 'score', '--kapa', 'examples/demo-run'], { encoding: 'utf8', timeout: 20_000, stdio: ['pipe', 'pipe', 'pipe'] });
  assert.equal(r.signal, null, 'timed out: the command waited on stdin');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--kapa; did you mean --kappa/);
});

test('missing values, a value given twice, values for booleans are usage errors', () => {
  for (const args of [['score', 'examples/demo-run', '--kappa'], ['score', 'examples/demo-run', '--kappa', '--tau', '0.5'], ['score', 'x', '--kappa', '0.1', '--kappa', '0.2'], ['report', 'x', '--json=yes']]) {
    const r = cli(args);
    assert.equal(r.code, 2, args.join(' '));
    assert.doesNotMatch(r.err, /undefined/);
  }
  assert.match(cli(['score', 'examples/demo-run', '--kappa']).err, /--kappa needs a value/);
});

test('numbers are decimal only: 0x1, 0b1, Infinity and blanks are not κ', () => {
  for (const v of ['0x1', '0b1', '0o1', 'Infinity', ' ', '1_0', '.']) {
    const r = cli(['score', '-', `--kappa=${v}`], '');
    assert.equal(r.code, 2, v);
    assert.match(r.err, /not a decimal number/, v);
  }
  assert.equal(cli(['sweep', 'x', '--kappa', '0x0:1:0.5']).code, 2);
  assert.equal(cli(['score', 'x', '--jobs', '0x2']).code, 2);
  assert.equal(cli(['score', 'x', '--max-group-size', '1e3']).code, 2);
});

test('--flag=value and --flag value are the same; -- ends the flags', () => {
  const a = parseCommand('score', ['--kappa=0.3', 'p']);
  const b = parseCommand('score', ['--kappa', '0.3', 'p']);
  assert.deepEqual([...a.flags], [...b.flags]);
  assert.deepEqual(a.positionals, ['p']);
  const c = parseCommand('score', ['--kappa', '0.3', '--', '--weird-file-name']);
  assert.deepEqual(c.positionals, ['--weird-file-name']);
  assert.deepEqual(parseCommand('score', ['-']).positionals, ['-']);
  assert.throws(() => parseCommand('score', ['--kapa=1']), UsageError);
});

test('equal keeps answers that start with "-"', () => {
  const r = cli(['equal', '-1', '-1']);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out.trim(), 'true');
});

test('CMD --help and -h list every flag the command takes with defaults and ranges, from PARAM_SPECS', () => {
  for (const cmd of Object.keys(COMMAND_DEFS) as Command[]) {
    const r = cli([cmd, '--help']);
    assert.equal(r.code, 0, cmd);
    assert.equal(r.out, commandHelp(cmd));
    for (const name of optionsOf(cmd).keys()) assert.ok(r.out.includes(`--${name}`), `${cmd} --help lacks --${name}`);
    assert.equal(cli([cmd, '-h']).out, r.out);
  }
  const score = commandHelp('score');
  for (const s of PARAM_SPECS) {
    const line = score.split('\n').find((l) => l.trimStart().startsWith(`--${s.flag} `))!;
    assert.ok(line, s.flag);
    const d = DEFAULT_PARAMS[s.id];
    if (d !== null) assert.ok(line.includes(`Default ${formatNumber(d as number)},`), line);
    assert.ok(line.includes(`${formatNumber(s.min)}, ${formatNumber(s.max)}]`), line);
  }
  // help wins over a bad flag, as in git
  assert.equal(cli(['score', '--kapa', '1', '--help']).code, 0);
});

test('--version prints the package version; an unknown command suggests one', () => {
  const pkg = JSON.parse(require('node:fs').readFileSync('package.json', 'utf8'));
  assert.equal(cli(['--version']).out.trim(), `consensus-lens ${pkg.version}`);
  const r = cli(['reprot', 'x']);
  assert.equal(r.code, 2);
  assert.match(r.err, /did you mean report\?/);
});
