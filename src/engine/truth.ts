// "Is this label correct?" — the one answer every surface gives (docs/contract.md#ground-truth). Logged ground truth is a diagnostic, never an input to an operator. A log may hold
// several accepted forms of it (verl `gts` lists such as ["\\frac{3}{4}", "0.75"]): a label equal
// to any of them is correct. Equality is the answer equivalence of docs/answers.md
// (answersEqual), whose verdict is deterministic.
import { answersEqual } from './answers/answers';

/** What a group carries of its ground truth. */
export interface TruthOf {
  groundTruth?: string | null;
  groundTruthForms?: readonly string[];
}

/** Every accepted form of the group's ground truth; empty when none is logged. */
export function truthForms(g: TruthOf): readonly string[] {
  if (g.groundTruth === null || g.groundTruth === undefined || g.groundTruth === '') return [];
  return g.groundTruthForms?.length ? g.groundTruthForms : [g.groundTruth];
}

function equalOrSame(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return answersEqual(a, b);
  } catch {
    // answersEqual is total on strings; a throw would be a bug: the plain comparison stands.
    return false;
  }
}

/**
 * Is `label` the group's logged ground truth? null when none is logged; false for no label
 * (an abstaining operator is never correct).
 */
export function isCorrect(label: string | null | undefined, g: TruthOf): boolean | null {
  const forms = truthForms(g);
  if (!forms.length) return null;
  if (label === null || label === undefined) return false;
  return forms.some((t) => equalOrSame(label, t));
}

/**
 * `isCorrect` for one group, memoised per label (labels repeat across operators and settings,
 * and an equivalence can be costly). null when the group logs no ground truth.
 */
export function correctnessOf(g: TruthOf): ((label: string | null) => boolean) | null {
  if (!truthForms(g).length) return null;
  const memo = new Map<string, boolean>();
  return (label) => {
    if (label === null) return false;
    let v = memo.get(label);
    if (v === undefined) memo.set(label, (v = isCorrect(label, g) === true));
    return v;
  };
}

/** The index of the first answer class equal to the ground truth; -1 when none is, null when no ground truth is logged. */
export function truthClassOf(classes: readonly { answer: string }[], g: TruthOf): number | null {
  if (!truthForms(g).length) return null;
  return classes.findIndex((c) => isCorrect(c.answer, g) === true);
}
