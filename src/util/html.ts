// HTML escaping for the two pages the code writes as text (the webviews' shell, the `report --html`
// page): text and attribute values alike. Roll-out text never reaches either (it is rendered by the
// pages' scripts as text nodes); what is escaped here is titles, URIs and nonces.

const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `s` safe as element text and inside a single- or double-quoted attribute. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ENTITY[c]);
}
