// One reader on one input, in a fresh process (bench/resources.mjs runs it): prints
// {"ms", "peakMb"}: wall time of the read and the process's peak RSS above what it held before
// (Linux: /proc/self/clear_refs and VmHWM).
// Run with tsx: node --import tsx bench/resource-case.ts <case> <path>
import { PassThrough } from 'node:stream';
import { RunIndex } from '../src/logs/log-layer';
import { readTrlFile } from '../src/logs/trl';
import { readParquetColumns } from '../src/logs/parquet';
import { readWandbTable } from '../src/logs/wandb';
import { runScore } from '../src/cli/score-command';
import { extractAnswer, formClasses } from '../src/engine/answers/answers';
import { readFileSync, writeFileSync } from 'node:fs';

const [kind, path] = process.argv.slice(2) as [string, string];

async function main(): Promise<void> {
  // Warm-ups that load what a read needs (mathjs, the parse thread) before the baseline is taken.
  formClasses(['\\sqrt{-4}', '2i']);
  if (kind === 'parquet') await readParquetColumns(process.argv[4]!).catch(() => undefined);
  const input = kind === 'answers' ? (JSON.parse(readFileSync(path, 'utf8')) as string[]) : undefined;
  global.gc?.();
  // Linux: writing 5 to clear_refs resets the peak RSS (VmHWM), so the peak read below is the
  // read's own, not start-up's (tsx compiling the sources).
  writeFileSync('/proc/self/clear_refs', '5');
  const base = process.memoryUsage().rss;
  const t0 = performance.now();
  if (kind === 'score') {
    const out = new PassThrough();
    out.resume();
    await runScore([path, '--jobs', '0', '--operators', 'majority', '--no-cache'], { stdin: new PassThrough(), stdout: out, stderr: new PassThrough().resume() });
  } else if (kind === 'index') {
    const idx = await RunIndex.open(path, { follow: false, onNotice: () => undefined });
    idx.close();
  } else if (kind === 'parquet') {
    await readTrlFile(path, undefined);
  } else if (kind === 'wandb') {
    await readWandbTable(path, undefined);
  } else if (kind === 'answers') {
    formClasses(input!.map((r) => extractAnswer(r)));
  }
  const ms = performance.now() - t0;
  // peak RSS (maxRSS covers the whole process, so the baseline is subtracted; a worker thread's
  // heap is in the same process)
  const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;
  const peakMb = Math.max(0, hwm - base) / 2 ** 20;
  console.log(JSON.stringify({ ms, peakMb }));
  process.exit(0);
}
void main();
