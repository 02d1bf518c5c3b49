// TRL completions parquet in each encoding pandas + pyarrow use (written by hyparquet-writer
// configured as pyarrow writes: scripts/pyarrow-like-parquet.mjs), and the real pyarrow files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parquetMetadata } from 'hyparquet';
import { collect, tempDir, write } from './helpers.js';
import { pandasToParquet } from '../../scripts/pyarrow-like-parquet.mjs';

const ab = (b: Buffer) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

/** A TRL ≥ 1.0 table: 2,048 rows (128 prompts × 16), rewards with NaN, int and float extras, unicode. */
function trlTable(step: number) {
  const t: Record<string, unknown[]> = { mode: [], step: [], prompt: [], completion: [], format_reward: [], accuracy_reward: [], entropy: [], num_tokens: [], advantage: [] };
  for (let p = 0; p < 128; p++) {
    for (let i = 0; i < 16; i++) {
      t.mode.push('train');
      t.step.push(step);
      t.prompt.push(`Question ${p}: combien font ${p} × 2 ? 数学`);
      t.completion.push(`${'raisonnement '.repeat(1 + (i % 5))}donc \\boxed{${i % 3 === 0 ? 2 * p + 1 : 2 * p}} — fin`);
      t.format_reward.push(0.5);
      t.accuracy_reward.push(p === 3 && i === 2 ? NaN : i % 3 === 0 ? 0 : 1);
      t.entropy.push(0.25 + i / 100);
      t.num_tokens.push(120 + i);
      t.advantage.push(i % 3 === 0 ? -1.2 : 0.6);
    }
  }
  return t;
}

test('pyarrow encodings (snappy, dictionary strings and numbers, nullable floats, INT64, 1,024-row groups) each decode', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const buf = pandasToParquet(trlTable(4));
    const meta = parquetMetadata(ab(buf));
    assert.equal(meta.row_groups.length, 2, '2,048 rows in groups of 1,024');
    for (const rg of meta.row_groups) {
      assert.equal(Number(rg.num_rows), 1024);
      for (const c of rg.columns) {
        assert.equal(c.meta_data!.codec, 'SNAPPY');
        assert.ok(c.meta_data!.encodings.includes('RLE_DICTIONARY'), `${c.meta_data!.path_in_schema} dictionary-encoded`);
      }
    }
    const types = Object.fromEntries(meta.schema.slice(1).map((s) => [s.name, [s.type, s.repetition_type]]));
    assert.deepEqual(types.step, ['INT64', 'OPTIONAL']);
    assert.deepEqual(types.accuracy_reward, ['DOUBLE', 'OPTIONAL']);
    assert.deepEqual(types.prompt, ['BYTE_ARRAY', 'OPTIONAL']);
    write(dir, 'out/completions/train/completions_00004.parquet', buf);
    write(dir, 'out/checkpoint-4/trainer_state.json', JSON.stringify({ log_history: [{ 'rewards/format_reward/mean': 0.5, 'rewards/accuracy_reward/mean': 0.6 }] }));
    const { groups, notices } = await collect(join(dir, 'out'));
    assert.deepEqual(notices.filter((n) => n.level !== 'info'), []);
    assert.equal(groups.length, 128);
    assert.ok(groups.every((g) => g.step === 4 && g.rollouts.length === 16));
    const g3 = groups[3];
    assert.equal(g3.prompt, 'Question 3: combien font 3 × 2 ? 数学');
    assert.equal(g3.rollouts[2].reward, 0.5, 'a null (NaN) reward is skipped in the sum');
    assert.equal(g3.rollouts[1].reward, 1.5);
    assert.equal(g3.rollouts[0].reward, 0.5);
    assert.equal((g3.rollouts[0] as { extra?: Record<string, unknown> }).extra!.num_tokens, 120);
  } finally {
    cleanup();
  }
});

test('a dictionary that does not pay falls back to PLAIN pages (long unique completions) and still decodes', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const t = trlTable(5);
    t.completion = t.completion.map((c, k) => `${k} ${'x'.repeat(3000)} ${c}`);
    const buf = pandasToParquet(t, { rowGroupSize: 2048 });
    const meta = parquetMetadata(ab(buf));
    const comp = meta.row_groups[0].columns.find((c) => c.meta_data!.path_in_schema[0] === 'completion')!;
    assert.ok(comp.meta_data!.encodings.includes('PLAIN'));
    write(dir, 'completions/completions_00005.parquet', buf);
    const { groups } = await collect(dir);
    assert.equal(groups.length, 128);
    assert.match(groups[0].rollouts[0].response, /^0 x{3000} /);
  } finally {
    cleanup();
  }
});

test('the real pandas 2 / pandas 3 + pyarrow files use the encodings the npm writer is configured to', () => {
  for (const v of ['pandas2', 'pandas3']) {
    const meta = parquetMetadata(ab(readFileSync(`test/fixtures/logs/writers/trl-1x-${v}/completions/train/completions_00001.parquet`)));
    assert.match(meta.created_by ?? '', /parquet-cpp-arrow/);
    assert.equal(Number(meta.num_rows), 1024);
    for (const c of meta.row_groups[0].columns) {
      assert.equal(c.meta_data!.codec, 'SNAPPY');
      assert.ok(c.meta_data!.encodings.includes('RLE_DICTIONARY'));
    }
    const arrow = meta.key_value_metadata?.find((k) => k.key === 'ARROW:schema');
    assert.ok(arrow, 'pyarrow keeps the arrow schema');
    assert.ok(meta.schema.slice(1).every((s) => s.repetition_type === 'OPTIONAL'));
  }
});
