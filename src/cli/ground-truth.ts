// What the commands say about logged ground truth (docs/contract.md#ground-truth), in one place
// so `report`, `health` and `compare` say the same words.
import type { PseudoLabelEvidence } from '../engine';

/**
 * What `--ground-truth auto` says when the logged ground truth looks like the pseudo-label: what it
 * saw, in words that claim no more than that, and how to decide otherwise.
 */
export function pseudoLabelNote(ev: PseudoLabelEvidence): string {
  return `looks like the pseudo-label: equal to the vote in ${ev.matching} of ${ev.groups} training groups (TTRL-style trainers write the vote into verl's "gts", and nothing in this dump says otherwise); accuracy is shown against it, the health analysis leaves it out; --ground-truth use to take it as the real answer (setting consensusLens.groundTruth in the editor), --ground-truth ignore to drop it`;
}

