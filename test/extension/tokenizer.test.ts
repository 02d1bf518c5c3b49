// Token ids laid on the text with a tokenizer file (src/extension/tokens/tokenizer.ts): byte-level
// and SentencePiece-style vocabularies, special tokens, a character split across tokens; and NeMo
// RL's lines (generation_logprobs and token_ids over prompt and response, a micro-batch of one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tokenTexts } from '../../src/extension/tokens/tokenizer';
import { layoutTokens, tokenDataOf } from '../../src/extension/tokens/confidence';

// GPT-2's byte-level spelling: " " is "Ġ", "\n" is "Ċ", byte 0xC3 is "Ã", 0xA9 is "©".
const byteLevel = {
  model: { type: 'BPE', vocab: { So: 0, 'Ġx': 1, 'Ġ=': 2, 'Ġcaf': 3, 'Ã': 4, '©': 5, 'Ċ': 6, '7': 7 } },
  added_tokens: [{ id: 8, content: '<|im_end|>', special: true }],
  decoder: { type: 'ByteLevel' },
};

test('byte-level: each id\u2019s text, a UTF-8 character split over two tokens on the second, special tokens empty', () => {
  const t = tokenTexts(byteLevel);
  const ids = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const out = t.decode(ids);
  assert.deepEqual(out, ['So', ' x', ' =', ' caf', '', 'é', '\n', '7', '']);
  assert.equal(out.join(''), 'So x = café\n7');
});

test('SentencePiece-style: ▁ is a space (the first one dropped), <0x0A> a byte', () => {
  const sp = {
    model: { type: 'Unigram', vocab: [['<unk>', 0], ['\u2581The', -1], ['\u2581sum', -2], ['<0x0A>', -3], ['\u2581is', -4], ['\u25817', -5]] },
    added_tokens: [{ id: 0, content: '<unk>', special: true }],
    decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '\u2581' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
  };
  assert.deepEqual(tokenTexts(sp).decode([1, 2, 3, 4, 5]), ['The', ' sum', '\n', ' is', ' 7']);
  assert.throws(() => tokenTexts({ vocab: {} }), /not a tokenizer\.json/);
});

test('a NeMo RL line: the generated positions\u2019 log-probs, and with a tokenizer their tokens on the text', () => {
  const text = 'So x = café\n7';
  // Prompt positions hold 0 (no token_loss_mask: generated from the first non-zero to input_lengths).
  const line = {
    content: [['What is x?', text]],
    generation_logprobs: [[0, 0, -0.1, -0.2, -0.3, -0.4, -0.5, -0.6, -0.7, -2.0, -0.05, 0]],
    token_ids: [[9, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 8]],
    input_lengths: [11],
  };
  assert.deepEqual(tokenDataOf(line), { kind: 'logprobs', logprobs: [-0.1, -0.2, -0.3, -0.4, -0.5, -0.6, -0.7, -2.0, -0.05], field: 'generation_logprobs', ids: true });
  const d = tokenDataOf(line, (ids) => tokenTexts(byteLevel).decode(ids));
  assert.equal(d.kind, 'tokens');
  if (d.kind !== 'tokens') return;
  const l = layoutTokens(text, d.tokens, d.logprobs);
  assert.equal(l.unaligned, 0);
  // "7" is token 8 of the response (index 7), at offset 12.
  assert.deepEqual([l.starts[7], l.ends[7], l.logprobs[7]], [12, 13, -2.0]);
});
