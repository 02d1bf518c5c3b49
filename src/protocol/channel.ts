// The one rule for stale replies between the host and its webviews. Every request (a slider
// move, a question switch, a live update, a sensitivity search) gets an increasing id from a
// `Latest`; its reply carries that id; a reply is used only while its id is still the latest one
// (`current`), so a slower, older reply never overwrites a newer question or setting. The host
// numbers the panel's views with one and tags each follow-up (the sensitivity read-out) with the
// id of the view it belongs to; the webview numbers its slider requests with another and records
// the id of the view it shows with a third. Pure: imported by the host and the webviews.

export class Latest {
  private last = 0;

  /** A new request: its id, which makes every earlier id old. */
  issue(): number {
    return ++this.last;
  }

  /** Records an id numbered by the other side (the view now shown) as the latest. */
  see(id: number): void {
    this.last = id;
  }

  /** Whether a reply to request `id` is still wanted: no other request was issued or seen since. */
  current(id: number | undefined): boolean {
    return id === this.last;
  }
}
