// A roll-out's short preview (tables and tooltips; the full text is read from disk when opened),
// made where the text is at hand: the worker thread that prepares a group, or the host in tests.

export const PREVIEW_CHARS = 160;

export function preview(text: string, max = PREVIEW_CHARS): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? t.slice(0, max - 1) + '…' : t;
}
