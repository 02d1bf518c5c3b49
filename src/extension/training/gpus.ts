// nvidia-smi: the query the GPU picker runs and the parsing of its CSV. Pure: no 'vscode'.
//
// nvidia-smi --query-gpu=index,uuid,name,memory.used,memory.total,utilization.gpu
//            --format=csv,noheader,nounits
// prints one line per GPU, e.g. "0, GPU-5b1c…, NVIDIA A100-SXM4-80GB, 1023, 81920, 7". Fields a
// GPU does not support read "[N/A]" or "[Not Supported]". With no GPU it prints
// "No devices were found" (exit 6); without a driver it fails ("NVIDIA-SMI has failed …", exit 9).

export const NVIDIA_SMI_ARGS = ['--query-gpu=index,uuid,name,memory.used,memory.total,utilization.gpu', '--format=csv,noheader,nounits'];

export interface GpuInfo {
  index: number;
  uuid: string;
  name: string;
  /** MiB; null when not reported. */
  memoryUsed: number | null;
  memoryTotal: number | null;
  /** Percent; null when not reported. */
  utilization: number | null;
}

export type GpuQuery =
  | { kind: 'gpus'; gpus: GpuInfo[]; skipped: string[] }
  /** nvidia-smi ran and found no GPU. */
  | { kind: 'none'; message: string }
  /** nvidia-smi is missing or failed: the launcher falls back to a free-text device list. */
  | { kind: 'unavailable'; message: string };

const NA = /^\[?(N\/A|Not Supported|Unknown Error|Insufficient Permissions|GPU is lost)\]?$/i;

function num(field: string): number | null {
  const t = field.trim().replace(/\s*(MiB|%)$/i, '');
  if (t === '' || NA.test(t)) return null;
  const v = Number(t);
  return Number.isFinite(v) ? v : null;
}

/** Parses the CSV (with or without the header line and units); lines that do not parse are returned in `skipped`. */
export function parseNvidiaSmiCsv(stdout: string): { gpus: GpuInfo[]; skipped: string[] } {
  const gpus: GpuInfo[] = [];
  const skipped: string[] = [];
  for (const raw of stdout.replace(/^\uFEFF/, '').split(/\r?\n/)) {
    const line = raw.trim();
    if (!line) continue;
    if (/^index\s*,/i.test(line)) continue; // header
    const f = line.split(',').map((s) => s.trim());
    if (f.length < 6 || !/^\d+$/.test(f[0])) {
      skipped.push(line);
      continue;
    }
    // A name with a comma in it: the last three fields are numbers, the name is what is between.
    const name = f.slice(2, f.length - 3).join(', ');
    const [used, total, util] = f.slice(f.length - 3).map(num);
    gpus.push({ index: Number(f[0]), uuid: f[1], name, memoryUsed: used, memoryTotal: total, utilization: util });
  }
  return { gpus, skipped };
}

/** Interprets one run of nvidia-smi: exit code (null when it did not start), output, spawn error. */
export function interpretNvidiaSmi(r: { code: number | null; stdout: string; stderr: string; error?: string }): GpuQuery {
  const text = `${r.stdout}\n${r.stderr}`;
  if (r.error) return { kind: 'unavailable', message: /ENOENT/.test(r.error) ? 'nvidia-smi is not installed' : `nvidia-smi could not run: ${r.error}` };
  if (/no devices were found/i.test(text)) return { kind: 'none', message: 'nvidia-smi found no GPU' };
  if (r.code !== 0) {
    const first =
      text
        .split(/\r?\n/)
        .map((s) => s.trim())
        .find(Boolean) ?? '';
    return { kind: 'unavailable', message: `nvidia-smi failed (exit ${r.code ?? 'signal'})${first ? `: ${first.slice(0, 200)}` : ''}` };
  }
  const { gpus, skipped } = parseNvidiaSmiCsv(r.stdout);
  if (!gpus.length) return skipped.length ? { kind: 'unavailable', message: `unexpected nvidia-smi output: ${skipped[0].slice(0, 200)}` } : { kind: 'none', message: 'nvidia-smi listed no GPU' };
  return { kind: 'gpus', gpus, skipped };
}

/** One line for the picker: "GPU 0 · NVIDIA A100 · 1.0/80.0 GiB · 7 %". */
export function describeGpu(g: GpuInfo): { label: string; description: string } {
  const gib = (m: number | null): string => (m === null ? '?' : (m / 1024).toFixed(1));
  const mem = g.memoryUsed === null && g.memoryTotal === null ? 'memory n/a' : `${gib(g.memoryUsed)}/${gib(g.memoryTotal)} GiB used`;
  const util = g.utilization === null ? 'utilisation n/a' : `${g.utilization}% busy`;
  return { label: `GPU ${g.index}: ${g.name || 'unknown'}`, description: `${mem} · ${util}` };
}

/** The last `n` lines of text (a job's output), without a trailing empty line. */
export function lastLines(text: string, n: number): string[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.slice(-n);
}

/** Keeps the last `max` characters of a stream's output (for the exit report). */
export class OutputTail {
  private text = '';
  constructor(private readonly max = 16_384) {}
  push(chunk: string): void {
    this.text += chunk;
    if (this.text.length > this.max * 2) this.text = this.text.slice(-this.max);
  }
  lines(n: number): string[] {
    // Drop ANSI escapes (colours, cursor moves): the lines are shown in a notification.
    return lastLines(
      this.text
        .slice(-this.max)
        .replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, '')
        .replace(/\r(?!\n)/g, '\n'),
      n,
    );
  }
}
