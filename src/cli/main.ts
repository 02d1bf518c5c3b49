// consensus-lens: the engine, headless (docs/contract.md#command-line).
import { COMMAND_DEFS, type CliIO, EXIT_CODES_HELP, UsageError, commandHelp, suggest, type Command } from './args';
import { errorStack } from '../util/errors';
import { runScore } from './score-command';
import { runSweep } from './sweep-command';
import { runServe } from './serve';
import { runEqual } from './equal';
import { runExtract } from './extract-command';
import { runReport } from './report';
import { runWatch } from './watch-command';
import { runHealth } from './health';
import { runIndex } from './index-run';
import { runCompare } from './compare-command';
import { CACHE_SUMMARY, CACHE_USAGE, runCache } from './cache';
import { pruneCache } from '../logs/cache/bound.js';
import { cacheDir } from '../logs/cache/cached-run.js';
import { version } from '../../package.json';
import { plainError } from './error-lines';
import { safeText } from '../logs/safe-text';

/** equal and extract read answers, which may start with "-": they parse their own arguments; so does cache. */
const ANSWER_COMMANDS: Record<string, { usage: string; summary: string }> = {
  equal: { usage: 'equal A B [--explain] | equal --jsonl FILE|- [--explain]', summary: 'symbolic answer equivalence (docs/answers.md): prints true or false' },
  extract: { usage: 'extract [FILE|-] [--no-last-number] | extract --jsonl FILE|-', summary: 'the extracted answer of a response, as JSON (or null)' },
  cache: { usage: CACHE_USAGE, summary: CACHE_SUMMARY },
};
/** The commands that may write the persisted cache: the folder is held to its bound after each (src/logs/cache/bound.ts). */
const CACHE_WRITERS = new Set(['score', 'sweep', 'report', 'health', 'index']);

function usage(): string {
  const rows = [...Object.values(COMMAND_DEFS), ...Object.values(ANSWER_COMMANDS)];
  return [
    `usage: consensus-lens <command> [options]    (consensus-lens <command> --help: its flags, defaults and ranges)`,
    '',
    ...rows.map((c) => `  ${c.usage.split(' ')[0].padEnd(9)}${c.summary}`),
    '',
    `  --version  print the version (${version})`,
    '',
    EXIT_CODES_HELP,
    '',
  ].join('\n');
}

const COMMANDS: Record<string, (argv: string[], io: CliIO) => Promise<number>> = {
  score: runScore,
  sweep: runSweep,
  serve: runServe,
  equal: runEqual,
  extract: runExtract,
  report: runReport,
  watch: runWatch,
  health: runHealth,
  index: runIndex,
  compare: runCompare,
  cache: runCache,
};

/** Asks for help: --help or -h before any `--`. */
function wantsHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

async function main(argv: string[]): Promise<number> {
  const io: CliIO = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    if (command === 'help' && rest[0] && rest[0] in COMMAND_DEFS) {
      io.stdout.write(commandHelp(rest[0] as Command));
      return 0;
    }
    (command ? io.stdout : io.stderr).write(usage());
    return command ? 0 : 2;
  }
  if (command === '--version' || command === '-V' || command === 'version') {
    io.stdout.write(`consensus-lens ${version}\n`);
    return 0;
  }
  const run = COMMANDS[command];
  if (!run) {
    const s = suggest(command, Object.keys(COMMANDS));
    io.stderr.write(`consensus-lens: unknown command "${command}"${s ? `; did you mean ${s}?` : ''}\n${usage()}`);
    return 2;
  }
  if (wantsHelp(rest)) {
    if (command in COMMAND_DEFS) io.stdout.write(commandHelp(command as Command));
    else io.stdout.write(`usage: consensus-lens ${ANSWER_COMMANDS[command].usage}\n\n${ANSWER_COMMANDS[command].summary}\n`);
    return 0;
  }
  try {
    const code = await run(rest, io);
    if (CACHE_WRITERS.has(command) && !rest.includes('--no-cache')) boundCache(io);
    return code;
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr.write(`consensus-lens ${command}: ${safeText(e.message)}\n`);
      return 2;
    }
    io.stderr.write(`consensus-lens ${command}: ${safeText(plainError(e))}\n`);
    return 1;
  }
}

/** Holds the cache folder to its bound; a failure is said, never changes the command's exit code. */
function boundCache(io: CliIO): void {
  try {
    pruneCache(cacheDir());
  } catch (e) {
    io.stderr.write(`consensus-lens: the cache folder was not held to its bound: ${safeText(plainError(e))}\n`);
  }
}

// Output may be piped into `head`: a closed pipe is a normal end, not a crash.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`consensus-lens: ${errorStack(e)}\n`);
    process.exitCode = 1;
  },
);
