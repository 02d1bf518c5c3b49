// Distinct strings numbered in the order first seen: the string columns of packed records and of
// the summaries' rows (a label, a file or a question repeats; its number is stored instead).
export class StringTable {
  readonly strings: string[] = [];
  private readonly ids = new Map<string, number>();

  /** The string's number (-1 for none). */
  id(v: string | null | undefined): number {
    if (v === null || v === undefined) return -1;
    let i = this.ids.get(v);
    if (i === undefined) {
      i = this.strings.push(v) - 1;
      this.ids.set(v, i);
    }
    return i;
  }
}
