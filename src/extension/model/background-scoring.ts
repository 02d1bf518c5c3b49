// The background scoring: every question of every followed run gets its summary (regime, overturn,
// gate, mismatches, health record), scored in run order (run-order.ts) in slices of a few
// milliseconds so the extension host never blocks. MS-TTRL's outcome cache follows the run's order
// as the training loop's did: every group's checks go into it as the pass walks the run, and a
// scored group whose question's cache before it changed is scored again (`RunEntry.outcomes`). A
// view of one question replays the same records (`history`). The owner (run-store.ts) says when a
// run changed (`markForRescore`, `schedule`) and is told when summaries changed, when to save and
// when a checkpoint may be due, through `ScoringHooks`. When the explorer re-scores is decided here.
import { createHash } from 'node:crypto';
import { errorMessage } from '../../util/errors';
import { TimeSlice } from '../../util/slice';
import { createRunContext, engineParams, outcomeReplay, resolveParams, type OperatorId, type OutcomeReplay, type Params, type RunContext } from '../../engine';
import { groupKey, type GroupHead, type GroupKey } from '../../logs/log-layer';
import { displayQuestionId, type RunEntry } from './run-entry';
import { runOrder } from './run-order';
import { score, summarize, type StoredGroup } from './scoring';

/** Groups the background scoring has being prepared ahead of the one it scores (one per worker thread, and one more). */
const PREPARE_AHEAD = 3;

/** What the background scoring needs of its owner. */
export interface ScoringHooks {
  /** The followed runs, in the order they are scored. */
  runs(): Iterable<RunEntry>;
  /** The run is still followed (not removed, re-opened or disposed). */
  live(run: RunEntry): boolean;
  disposed(): boolean;
  /** A group's features (not kept: prepared-groups.ts). */
  prepare(run: RunEntry, k: GroupKey, keep: boolean): Promise<{ version: number; group: StoredGroup } | undefined>;
  params(): Record<string, number>;
  configuredOperator(): OperatorId | undefined;
  log?: (message: string) => void;
  /** Resolves when every run has opened and its index has settled. */
  idle(): Promise<void>;
  /** Summaries of the run changed (a batch of them: the owner bumps the run's version and says so). */
  summariesChanged(run: RunEntry): void;
  /** Part way through a pass: a checkpoint save when enough is held unsaved (saves.ts). */
  checkpointIfDue(run: RunEntry): void;
  /** The pass over the run is done and it is not saved at its version. */
  scheduleSave(run: RunEntry): void;
}

export class BackgroundScoring {
  private generation = 0;
  private running = false;
  private again = false;

  constructor(private readonly hooks: ScoringHooks) {}

  /**
   * Runs that changed (or whose settings did) since their last scoring pass: that pass checks the
   * scored groups it has no outcome record of (`RunEntry.outcomes`: restored ones) for what
   * MS-TTRL's cache concerns. Other runs' passes skip their scored groups without building a head.
   * Value: a change count.
   */
  private readonly rescoreAll = new Map<string, number>();
  markForRescore(id: string): void {
    this.rescoreAll.set(id, (this.rescoreAll.get(id) ?? 0) + 1);
  }

  /** Resolves when the background scoring pass has nothing left to do. */
  async done(): Promise<void> {
    await this.hooks.idle();
    while (this.running || this.again) await new Promise((r) => setTimeout(r, 20));
  }

  /**
   * Scores every question without a summary, in step order, in slices of a few milliseconds so
   * the extension host never blocks. MS-TTRL's outcome cache runs over the steps in order: every
   * group's checks go into it as the pass walks the run, and a scored group whose question's cache
   * before it changed is scored again (`RunEntry.outcomes`).
   */
  schedule(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    const generation = ++this.generation;
    const work = async (): Promise<void> => {
      for (const run of [...this.hooks.runs()]) {
        if (!run.index) continue;
        const ctx: RunContext = createRunContext();
        const mark = this.rescoreAll.get(run.id) ?? 0;
        // scoring is the host's own work, paced a little looser than a restore's slices
        const slice = new TimeSlice(12);
        let lastEmit = Date.now();
        let changed = false;
        // Groups are scored one by one in step order (MS-TTRL's cache), but prepared ahead: a few
        // requests in flight keep every what-if worker busy while the host scores.
        const order = runOrder(run);
        // MS-TTRL's outcome cache, per question, for the parameters being scored with
        const msParams = resolveParams(engineParams(this.hooks.params()));
        const needs = (k: GroupKey): boolean => {
          const e = run.index?.head(k);
          if (!e?.complete || run.unprepared.get(k) === e.version) return false;
          return !run.summaries.has(k) || (mark > 0 && !run.outcomes.has(k) && !!e.outcomeChecks?.length);
        };
        const ahead = new Map<GroupKey, Promise<{ version: number; group: StoredGroup } | undefined>>();
        let next = 0;
        const prefetch = (from: number) => {
          next = Math.max(next, from);
          // A bounded look ahead per call: scored questions are skipped, and one scan to the end of
          // a huge run (one question to score early on, the rest scored) would stall the host.
          const stop = Math.min(order.length, next + 2048);
          while (ahead.size < PREPARE_AHEAD && next < stop) {
            const k = order.at(next++);
            if (needs(k) && !ahead.has(k)) ahead.set(k, this.hooks.prepare(run, k, false));
          }
        };
        /** Leaves a scored group as it is (its outcome checks still go into the cache, in order). */
        const pass = async (k: GroupKey, i: number, cheap: boolean): Promise<void> => {
          const m = run.outcomes.get(k);
          if (m?.replay) ctx.replayOutcomes(msParams, m.replay);
          ahead.delete(k);
          if (!cheap || (i & 255) === 255) if (slice.due) await slice.next();
        };
        for (let i = 0; i < order.length; i++) {
          {
            const k = order.at(i);
            if (generation !== this.generation || !this.hooks.live(run)) return;
            let head: GroupHead | undefined;
            if (run.summaries.has(k)) {
              // Scored. Again only when what its MS-TTRL read may have changed: the question's
              // outcome cache before it is not the one it was scored with (an earlier group of the
              // question changed), or, scored before this process kept track (restored) and the
              // run changed, it has outcome checks or its question has a cache.
              const m = run.outcomes.get(k);
              if (m) {
                if (seenBy(ctx, msParams, m.questionId) === m.seen) {
                  await pass(k, i, true);
                  continue;
                }
              } else if (mark === 0) {
                // a run restored with its summaries is walked without building a head: still in slices
                await pass(k, i, true);
                continue;
              } else {
                head = run.index.head(k);
                if (!head || !(head.outcomeChecks?.length || seenBy(ctx, msParams, displayQuestionId(head)) !== '[]')) {
                  await pass(k, i, false);
                  continue;
                }
              }
            }
            const e = head ?? run.index.head(k);
            if (!e?.complete || run.unprepared.get(k) === e.version) {
              await pass(k, i, false);
              continue;
            }
            prefetch(i + 1);
            const p = await (ahead.get(k) ?? this.hooks.prepare(run, k, false));
            ahead.delete(k);
            prefetch(i + 1);
            // prepared for the group as it is now (a change meanwhile gives it a new version: it is
            // scored again on the next pass, from its new roll-outs)
            if (!p || p.version !== run.index.head(k)?.version) continue;
            const g = p.group;
            const seen = seenBy(ctx, msParams, g.prepared.questionId);
            try {
              run.summaries.set(k, summarize(g, score(g, this.hooks.params(), this.hooks.configuredOperator(), ctx, summaryOperators(this.hooks.configuredOperator())), ctx));
              changed = true;
            } catch (err) {
              this.hooks.log?.(`scoring ${g.key.questionId} (step ${g.key.step}) failed: ${errorMessage(err)}`);
            }
            // Its checks go into the cache whether or not MS-TTRL ran on it (the training loop's
            // cache has every group's); a group that MS-TTRL scored already leaves it as it is.
            const replay = g.prepared.outcomeChecks.length ? outcomeReplay(g.prepared) : undefined;
            if (replay) ctx.replayOutcomes(msParams, replay);
            if (replay || seen !== '[]') run.outcomes.set(k, { questionId: g.prepared.questionId, seen, replay });
            else run.outcomes.delete(k);
            if (slice.due) {
              this.hooks.checkpointIfDue(run);
              await slice.next();
              if (changed && Date.now() - lastEmit > 400) {
                this.hooks.summariesChanged(run);
                lastEmit = Date.now();
                changed = false;
              }
            }
          }
        }
        if ((this.rescoreAll.get(run.id) ?? 0) === mark) this.rescoreAll.delete(run.id);
        if (changed) this.hooks.summariesChanged(run);
        if (run.savedVersion !== run.version) this.hooks.scheduleSave(run);
      }
    };
    setImmediate(() => {
      void work()
        .catch((err) => this.hooks.log?.(`background scoring failed: ${errorMessage(err)}`))
        .finally(() => {
          this.running = false;
          if (this.again && !this.hooks.disposed()) {
            this.again = false;
            this.schedule();
          }
        });
    });
  }

  /**
   * What the question's earlier groups (complete, at earlier steps, with outcome checks) feed
   * MS-TTRL's outcome cache, in run order: the cache for the question is what their checks made it
   * (docs/contract.md#ms-ttrl). A view scored alone replays them (scoring.ts `outcomeContext`), so
   * that its MS-TTRL is the run-wide scoring's and the training loop's. From the background
   * scoring's records when it has them, else the group prepared.
   */
  async history(run: RunEntry, h: GroupHead): Promise<OutcomeReplay[]> {
    const out: OutcomeReplay[] = [];
    for (const step of [...run.steps.keys()]) {
      if (step >= h.step) break;
      const ek = groupKey(h.run, step, h.questionId);
      const e = run.index?.head(ek);
      if (!e?.complete || !e.outcomeChecks?.length) continue;
      const known = run.outcomes.get(ek)?.replay; // dropped when the group changes
      const replay = known ?? (await this.hooks.prepare(run, ek, false).then((p) => p && outcomeReplay(p.group.prepared)));
      if (replay) out.push(replay);
    }
    return out;
  }
}

/**
 * A question's outcome cache as the store keeps it for a scored group (`RunEntry.outcomes.seen`):
 * short ones as they are ('[]': nothing cached), longer ones as their SHA-1 (a memo per group of a
 * huge MS-TTRL run: a few bytes, not the cache's JSON).
 */
function seenBy(ctx: RunContext, p: Params, questionId: string): string {
  const s = ctx.outcomeFingerprint(p, questionId);
  return s.length <= 48 ? s : createHash('sha1').update(s).digest('base64');
}

function summaryOperators(configured: OperatorId | undefined): OperatorId[] {
  return [...new Set<OperatorId>(['majority', 'core', ...(configured ? [configured] : [])])];
}
