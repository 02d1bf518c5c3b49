// consensus-lens: the engine, headless (SPEC §6).
import { CliIO, UsageError } from './args';
import { runScore, runSweep } from './score';
import { runServe } from './serve';
import { runEqual } from './equal';
import { runExtract } from './extract';
import { runReport } from './report';
import { runWatch } from './watch';
import { runHealth } from './health';
import { safeText } from '../logs/safe-text';

const USAGE = `usage: consensus-lens <command> [options]

  score [PATH|-]      score every group of a run (folder, log file, or - for native JSONL on stdin)
                      [--operators majority,cisc,ec,core,t3rl,msttrl] [--kappa K] [--tau T] [--alpha A]
                      [--shift C] [--eps E] [--tmax N] [--omega W] [--cisc-temp T] [--lambda L]
                      [--tau-low X] [--tau-high Y] [--configured-operator OP] [--jobs N]
                      [--max-group-size N]  (default 4096; larger groups are reported and skipped)
  sweep PATH          re-score the run for every combination of parameter lists
                      --kappa 0:1:0.1 [--tau LIST] [--alpha LIST] [--operators ...]
  report PATH         per-step summary of a run (training and validation streams apart) [--html FILE]
  health PATH         run health: timeline, change-point alarms, confidence premise, reward bugs,
                      degenerate roll-outs, how many roll-outs [--json] [--configured-operator OP]
  watch PATH          follow a run; one JSON line per newly completed group
                      score, sweep, report, watch: [--ground-truth auto|ignore] (auto: logged ground
                      truth is used, unless it is the vote itself, TTRL's pseudo-label)
  serve --stdio       reward worker for training loops (one JSON request per line)
  equal A B           print true/false;  equal --jsonl FILE|-
  extract [FILE|-]    print the extracted answer of a response as JSON (or null)
`;

const COMMANDS: Record<string, (argv: string[], io: CliIO) => Promise<number>> = {
  score: runScore,
  sweep: runSweep,
  serve: runServe,
  equal: runEqual,
  extract: runExtract,
  report: runReport,
  watch: runWatch,
  health: runHealth,
};

async function main(argv: string[]): Promise<number> {
  const io: CliIO = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    (command ? io.stdout : io.stderr).write(USAGE);
    return command ? 0 : 2;
  }
  const run = COMMANDS[command];
  if (!run) {
    io.stderr.write(`consensus-lens: unknown command "${command}"\n${USAGE}`);
    return 2;
  }
  try {
    return await run(rest, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr.write(`consensus-lens ${command}: ${safeText(e.message)}\n`);
      return 2;
    }
    io.stderr.write(`consensus-lens ${command}: ${safeText((e as Error).message ?? String(e))}\n`);
    return 1;
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
    process.stderr.write(`consensus-lens: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  },
);
