// Per-file record parsing for the JSON-lines formats (native, verl): format detection by content,
// JSON parsing with the NaN rewrite, conversion, and the notices (each problem named by file:line,
// repeated problems of one kind — NaN/Infinity, bad UTF-8, a mistyped optional field — reported once
// per run, at their first file:line).
import { convertNative, looksNative } from './native.js';
import { errorMessage } from '../util/errors';
import type { Conversion } from './native.js';
import { isUtf8 } from 'node:buffer';
import { parseJsonLine, type JsonParse } from './json.js';
import { MAX_LINE_BYTES, decodeLine, type Line, type RawLine } from './lines.js';
import { ELIDED_OUTPUT, isBlankLine, type Skeleton } from './skeleton.js';
import type { LogFormat, NoticeSink, ParsedRecord } from './log-types.js';
import { looksVerl, VerlFileContext } from './verl.js';
import { looksNemo, NemoFileContext } from './nemo.js';
import { looksPrimeRl, PrimeRlFileContext } from './primerl.js';
import { looksSkyrl, SkyrlFileContext } from './skyrl.js';
import { looksMiles, MilesFileContext } from './miles.js';

/** Lines without a recognisable record after which a file is declared unsupported. */
const DETECT_LINES = 5;
/** Malformed-line notices per file before they are only counted. */
const MAX_LINE_NOTICES = 20;

export const UNSUPPORTED_HINT = 'not a consensus-lens/v1, verl, TRL, NeMo RL, prime-rl, SkyRL, miles or W&B table log';

/** Bytes of a file examined before it is read as a log: a file that is not text stops here. */
export const PROBE_BYTES = 64 * 1024;

/**
 * Files that frameworks write next to their logs and that are never logs: TRL / transformers'
 * output_dir (config.json, trainer_state.json, tokenizer files, weights), W&B's run folder
 * (wandb-summary.json, config.yaml, output.log), and anything with a non-log extension. In a run
 * folder they are skipped quietly (one summary line); named on the command line they are an error.
 */
const NOT_LOG_NAMES = new Set([
  'config.json',
  'trainer_state.json',
  'generation_config.json',
  'adapter_config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'added_tokens.json',
  'vocab.json',
  'preprocessor_config.json',
  'chat_template.json',
  'model.safetensors.index.json',
  'pytorch_model.bin.index.json',
  'all_results.json',
  'train_results.json',
  'eval_results.json',
  'wandb-summary.json',
  'wandb-metadata.json',
  'requirements.txt',
  // SkyRL's evaluation metrics, beside its per-data-source dumps
  'aggregated_results.jsonl',
]);
const NOT_LOG_EXT = /\.(txt|md|rst|ya?ml|toml|ini|cfg|conf|py|sh|bin|pt|pth|safetensors|ckpt|npy|npz|pkl|pickle|png|jpe?g|gif|webp|svg|html?|csv|tsv|log|out|err|patch|diff|wandb|lock|tar|gz|tgz|zip|zst|jinja|model|pb)$/i;

/**
 * miles' per-token columns (`--dump-details DIR`: `DIR/dashboard_columns/rollout_{id}.parquet`):
 * token ids, loss mask and log-probs, no text or reward, so not a roll-out log on its own; they
 * give the converted miles trajectories their confidence (src/logs/miles-columns.ts).
 */
export const MILES_COLUMNS = /[\\/]dashboard_columns[\\/]rollout_(eval_)?\d+\.parquet$/i;

/** True for a file name that is never a log (see NOT_LOG_NAMES). */
export function isNotLogName(file: string): boolean {
  const name = file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
  return NOT_LOG_NAMES.has(name) || NOT_LOG_EXT.test(name) || MILES_COLUMNS.test(file);
}

/**
 * The notice for a slime / miles `--dump-details` roll-out file (`rollout_data/{id}.pt`,
 * `rollout_data/eval_{id}.pt`): a PyTorch pickle, which runs code when it is loaded. It is never
 * opened here (docs/log-formats.md#slime-and-miles); the notice says how to convert a trusted one.
 */
export function torchDumpNotice(file: string): string | undefined {
  if (!/[\\/]rollout_data[\\/](eval_)?\d+\.pt$/i.test(file)) return undefined;
  return (
    `${file}: a slime/miles --dump-details roll-out file is a PyTorch pickle, which runs code when it is loaded: not read. ` +
    `If you trust it, convert it to native JSON lines: python -m consensus_lens.convert slime ${file} --out DIR (loads it with torch.load(weights_only=True)), or in VS Code: Consensus Lens: Open Trackio Database or slime/miles Dump (with consensusLens.convert.allowPickles on, in a trusted workspace)`
  );
}

/** True for a name that says JSON lines (an unrecognised one of these is an error, never quiet). */
export function isJsonlName(file: string): boolean {
  return /\.(jsonl|ndjson)$/i.test(file);
}

/** The JSON-lines format a record's keys say it is (format detection; records.ts detectLogFile too). */
export function detectRecord(o: Record<string, unknown>): LogFormat | undefined {
  if (looksNative(o)) return 'native';
  if (looksVerl(o)) return 'verl';
  if (looksNemo(o)) return 'nemo-rl';
  if (looksSkyrl(o)) return 'skyrl';
  if (looksPrimeRl(o)) return 'prime-rl';
  if (looksMiles(o)) return 'miles';
  return undefined;
}

/** A NUL byte in the first block: a binary file (text logs never hold one). */
export function looksBinary(block: Buffer): boolean {
  return block.indexOf(0) !== -1;
}

/** What the first bytes of a file say: parquet magic, JSON object lines, or something else. */
export function sniff(head: Buffer): 'parquet' | 'jsonl' | 'empty' | 'unsupported' {
  if (head.length >= 4 && head.toString('latin1', 0, 4) === 'PAR1') return 'parquet';
  let i = 0;
  if (head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) i = 3; // BOM
  while (i < head.length && (head[i] === 32 || head[i] === 9 || head[i] === 10 || head[i] === 13)) i++;
  if (i === head.length) return 'empty';
  return head[i] === 123 /* { */ ? 'jsonl' : 'unsupported';
}

/** What a format never reads of the texts skeleton.ts leaves out (ELIDED_* flags). */
const ELIDABLE: Record<LogFormat, number> = {
  // native reads `response` only as "is it a string" (the run index keeps no text)
  native: ~0,
  // verl: `output` is its text; any other top-level key goes to `extra`
  verl: ELIDED_OUTPUT,
  'nemo-rl': 0,
  trl: 0,
  wandb: 0,
  // neither writes a top-level `response` or `output`
  'prime-rl': 0,
  skyrl: 0,
  miles: 0,
};

/** Where a line's JSON starts: after the byte-order mark of a file's first line (as `line` skips it), else 0. */
export function lineStart(l: RawLine): number {
  return l.line === 1 && l.bytes.length >= 3 && l.bytes[0] === 0xef && l.bytes[1] === 0xbb && l.bytes[2] === 0xbf ? 3 : 0;
}

export interface ParserState {
  format: LogFormat | undefined;
  unsupported: boolean;
  skipped: number;
  records: number;
  nonBlank: number;
  lineNotices: number;
  early: Array<{ line: number; message: string }>;
  verl: ReturnType<VerlFileContext['state']>;
  /** Absent in an index saved before miles was read. */
  miles?: ReturnType<MilesFileContext['state']>;
}

export class JsonlFileParser {
  format: LogFormat | undefined;
  unsupported = false;
  /** Complete lines that were skipped (malformed or rejected). */
  skipped = 0;
  records = 0;
  private nonBlank = 0;
  /** Non-blank lines read (for the run's "k of n lines skipped" summary). */
  get lines(): number {
    return this.nonBlank;
  }
  private verl: VerlFileContext;
  private nemo: NemoFileContext;
  private primeRl: PrimeRlFileContext;
  private skyrl: SkyrlFileContext;
  private miles: MilesFileContext;
  private lineNotices = 0;

  constructor(
    readonly root: string,
    readonly file: string,
    private readonly onNotice: NoticeSink,
    private readonly only?: LogFormat,
    /** Problems reported once per run (non-finite numbers, bad UTF-8, mistyped optional fields): shared by a run's parsers. */
    private readonly runOnce: Set<string> = new Set(),
    /**
     * Set for a file of a run folder that need not be a log (not *.jsonl): when no record is found it
     * is passed here (the caller sums such files up in one line) instead of an error, and the lines
     * read before that are not reported one by one.
     */
    private readonly quiet?: (file: string, reason: string) => void,
  ) {
    this.verl = new VerlFileContext(root, file);
    this.nemo = new NemoFileContext(this.verl.run, file);
    this.primeRl = new PrimeRlFileContext(root, file);
    this.skyrl = new SkyrlFileContext(root, file);
    this.miles = new MilesFileContext(root, file);
  }

  /** Line problems seen before the format is known (a quiet file that is not a log drops them). */
  private early: Array<{ line: number; message: string }> = [];

  private problem(line: number, message: string): void {
    this.skipped++;
    if (this.quiet && this.format === undefined) {
      this.early.push({ line, message });
      return;
    }
    if (this.lineNotices++ < MAX_LINE_NOTICES) {
      this.onNotice({ level: 'warning', message: `${this.file}:${line}: ${message}; line skipped`, file: this.file, line });
    }
  }

  private onceNotice(key: string, line: number, message: string): void {
    if (this.runOnce.has(key)) return;
    this.runOnce.add(key);
    this.onNotice({ level: 'warning', message: `${this.file}:${line}: ${message} (reported once per run)`, file: this.file, line });
  }

  /** Parses one complete line; returns its record, or undefined (blank, skipped, or unsupported). */
  line(l: Line): ParsedRecord | undefined {
    if (this.unsupported) return undefined;
    if (l.tooLong) {
      this.problem(l.line, `a line of ${l.length.toLocaleString('en-US')} bytes, over the ${MAX_LINE_BYTES >> 20} MiB line-length limit (not read)`);
      return this.checkDetect();
    }
    const text = l.line === 1 && l.text.charCodeAt(0) === 0xfeff ? l.text.slice(1) : l.text;
    if (text.trim() === '') return undefined;
    this.nonBlank++;
    if (l.badUtf8) this.onceNotice('utf8', l.line, 'invalid UTF-8 bytes, read as U+FFFD replacement characters');
    let p: JsonParse;
    try {
      p = parseJsonLine(text);
    } catch (err) {
      this.problem(l.line, `malformed JSON (${errorMessage(err).replace(/\s+/g, ' ').slice(0, 120)})`);
      return this.checkDetect();
    }
    return this.record(l, p);
  }

  /**
   * `line` for a line read as bytes, given its skeleton (skeletonOf from `lineStart(l)`, or null):
   * the same record and notices, except that the roll-out texts the skeleton left out are ""
   * in the record (for a reader that reads them back by offset: the run index). A line whose
   * skeleton does not parse is parsed whole, so a malformed line is reported in the same words.
   */
  lineBytes(l: RawLine, sk: Skeleton | null): ParsedRecord | undefined {
    if (this.unsupported) return undefined;
    if (l.tooLong) return this.line(decodeLine(l));
    if (isBlankLine(l.bytes)) return undefined;
    let p: JsonParse | undefined;
    if (sk) {
      try {
        p = parseJsonLine(sk.text);
      } catch {
        p = undefined;
      }
    }
    if (!p) return this.line(decodeLine(l));
    this.nonBlank++;
    if (!isUtf8(l.bytes)) this.onceNotice('utf8', l.line, 'invalid UTF-8 bytes, read as U+FFFD replacement characters');
    return this.record(l, p, sk!.elided ? { elided: sk!.elided, whole: () => parseJsonLine(decodeLine(l).text.slice(lineStart(l) ? 1 : 0)) } : undefined);
  }

  /** A parsed line → its record (format detection on the first records, then conversion). */
  private record(l: { line: number; offset: number; length: number }, p: JsonParse, skeleton?: { elided: number; whole: () => JsonParse }): ParsedRecord | undefined {
    const value = p.value;
    if (p.nonFinite) this.onceNotice('nonfinite', l.line, 'non-finite number (NaN/Infinity) treated as a missing value');
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      this.problem(l.line, 'expected a JSON object');
      return this.checkDetect();
    }
    let o = value as Record<string, unknown>;
    if (this.format === undefined) {
      const f = detectRecord(o);
      if (f === undefined || (this.only && f !== this.only)) {
        this.problem(l.line, f ? `a ${f} record where only ${this.only} is accepted` : 'not a recognised record');
        return this.checkDetect();
      }
      this.format = f;
      for (const p of this.early.splice(0)) {
        this.skipped--;
        this.problem(p.line, p.message);
      }
      if (f === 'verl' && !this.runOnce.has('verl-logprobs') && !('rollout_log_probs' in o) && !('mean_logprob' in o)) {
        this.runOnce.add('verl-logprobs');
        this.onNotice({ level: 'info', message: `${this.file}: verl dump: no log-probs are logged, so confidence-based operators (cisc, core) run without confidence`, file: this.file });
      }
    }
    // A left-out text that this format reads (verl keeps every unknown top-level key in `extra`;
    // NeMo RL every key): the whole line, then.
    if (skeleton && (skeleton.elided & ~ELIDABLE[this.format]) !== 0) o = skeleton.whole().value as Record<string, unknown>;
    const source = { file: this.file, line: l.line, offset: l.offset, length: l.length };
    const conv: Conversion =
      this.format === 'native'
        ? convertNative(o, source)
        : this.format === 'nemo-rl'
          ? this.nemo.convert(o, source)
          : this.format === 'prime-rl'
            ? this.primeRl.convert(o, source)
            : this.format === 'skyrl'
              ? this.skyrl.convert(o, source)
              : this.format === 'miles'
                ? this.miles.convert(o, source)
                : this.verl.convert(o, source);
    if (!conv.ok) {
      this.problem(l.line, conv.error);
      return undefined;
    }
    for (const f of conv.dropped) this.onceNotice(`field:${f}`, l.line, `field "${f}" has an unexpected type, treated as missing`);
    if (this.format === 'verl' && this.verl.ttrl && !this.runOnce.has('ttrl')) {
      this.runOnce.add('ttrl');
      this.onNotice({
        level: 'info',
        message: `${this.file}: TTRL run on verl: "gts", "acc" and "extracted_gt" hold the majority label, not ground truth; they are not used as ground truth`,
        file: this.file,
      });
    }
    this.records++;
    return conv.record;
  }

  private checkDetect(): undefined {
    if (this.format === undefined && this.nonBlank >= DETECT_LINES) {
      this.unsupported = true;
      if (this.quiet) return void this.quiet(this.file, `no record in its first ${DETECT_LINES} lines`);
      this.onNotice({ level: 'error', message: `${this.file}: unsupported file (${UNSUPPORTED_HINT}: no record in its first ${DETECT_LINES} lines); skipped`, file: this.file });
    }
    return undefined;
  }

  /** What the parser learnt of its file so far, as plain data (a persisted index resumes the file from it). */
  state(): ParserState {
    return { format: this.format, unsupported: this.unsupported, skipped: this.skipped, records: this.records, nonBlank: this.nonBlank, lineNotices: this.lineNotices, early: this.early, verl: this.verl.state(), miles: this.miles.state() };
  }

  /** Resumes from `state()` of a parser of the same file. */
  restoreState(s: ParserState): void {
    this.format = s.format;
    this.unsupported = s.unsupported;
    this.skipped = s.skipped;
    this.records = s.records;
    this.nonBlank = s.nonBlank;
    this.lineNotices = s.lineNotices;
    this.early = s.early;
    this.verl.restoreState(s.verl);
    if (s.miles) this.miles.restoreState(s.miles);
  }

  /** At the end of a one-shot read (or when a followed file is settled): summary notices. */
  finish(): void {
    if (this.unsupported) return;
    if (this.lineNotices > MAX_LINE_NOTICES) {
      this.onNotice({ level: 'warning', message: `${this.file}: ${this.skipped} lines skipped in total (first ${MAX_LINE_NOTICES} reported)`, file: this.file });
    }
    if (this.nonBlank === 0) {
      this.onNotice({ level: 'warning', message: `${this.file}: empty file, no records`, file: this.file });
    } else if (this.format === undefined) {
      this.unsupported = true;
      if (this.quiet) return void this.quiet(this.file, 'no record');
      this.onNotice({ level: 'error', message: `${this.file}: unsupported file (${UNSUPPORTED_HINT}); skipped`, file: this.file });
    }
  }
}
