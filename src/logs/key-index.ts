// Group keys held off the JavaScript heap: each key's UTF-8 bytes in one growing buffer, found
// through an open-addressing table of numbers. A key given to `add` gets a number (its id) for the
// life of the index; ids are dense, in the order keys were first added, and never reused. A huge
// run's keys as strings in Maps are ~110 bytes each on the extension host's heap (the string and a
// Map entry per holder); here ~40 bytes each in typed arrays, whatever holds their ids.
//
// An id can be retired (`retire`): its key is then absent (`id` still finds it, for the owner that
// must clean up after it), and adding the key again gives it a new id, as a Map puts a key deleted
// and set again at the end. Retired ids keep their bytes: the index grows with the keys ever added.
//
// Exact for the keys `groupKey` makes (JSON.stringify output: well-formed UTF-16, which UTF-8
// carries both ways); a string with a lone surrogate would not come back as it was, and is refused.
import type { GroupKey } from './log-types.js';
import { fnv1aBytes as hashBytes } from '../util/hash';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export class KeyIndex {
  private bytes = Buffer.allocUnsafe(1 << 12);
  private used = 0;
  /** Per id: where its bytes start (they end where the next id's start; `starts[count]` = `used`). */
  private starts = new Uint32Array(1025);
  private live = new Uint8Array(1024);
  /** Per id: the id its key had before it was retired and added again (-1: none). */
  private prev = new Int32Array(1024);
  private count = 0;
  /** Counts `clear`s: ids given before one mean nothing after it. */
  generation = 0;
  private liveCount = 0;
  /** Open addressing, linear probing: id + 1 per slot (0: empty), at most 70% full. */
  private slots = new Int32Array(2048);
  private scratch = Buffer.allocUnsafe(256);

  /** Ids given so far (the next id); typed arrays indexed by id need this length. */
  get ids(): number {
    return this.count;
  }

  /** Keys present (added and not retired). */
  get size(): number {
    return this.liveCount;
  }

  /** The key's id, live or retired (the latest one it was given); -1 if it was never added. */
  id(k: GroupKey): number {
    const len = this.encode(k);
    return this.find(len, hashBytes(this.scratch, 0, len));
  }

  /** The key's live id, -1 when it is absent. */
  liveId(k: GroupKey): number {
    const i = this.id(k);
    return i >= 0 && this.live[i] ? i : -1;
  }

  isLive(id: number): boolean {
    return id >= 0 && id < this.count && this.live[id] === 1;
  }

  /** The key's live id, a new one (at the end) when it is absent or retired. */
  add(k: GroupKey): number {
    const len = this.encode(k);
    const h = hashBytes(this.scratch, 0, len);
    const mask = this.slots.length - 1;
    let s = h & mask;
    for (;;) {
      const v = this.slots[s];
      if (v === 0) break;
      const i = v - 1;
      if (this.same(i, len)) {
        if (this.live[i]) return i;
        break; // retired: its slot takes the new id
      }
      s = (s + 1) & mask;
    }
    const before = this.slots[s] - 1;
    const id = this.append(len);
    this.prev[id] = before;
    this.slots[s] = id + 1;
    if (10 * this.count > 7 * this.slots.length) this.rehash(this.slots.length * 2);
    return id;
  }

  /** The key is absent from now on (its id still found by `id`). */
  retire(id: number): void {
    if (!this.isLive(id)) return;
    this.live[id] = 0;
    this.liveCount--;
  }

  /** The id the key of `id` had before it was retired and added again (-1: none). */
  previous(id: number): number {
    return this.prev[id];
  }

  /** The key of an id (a new string each time). */
  key(id: number): GroupKey {
    return this.bytes.toString('utf8', this.starts[id], this.starts[id + 1]);
  }

  /**
   * Room for `keys` keys in all, `bytes` of them (a restore knows how many keys it brings: no
   * growth, no rehash, no doubling's slack on the way).
   */
  reserve(keys: number, bytes: number): void {
    if (bytes > this.bytes.length) {
      const b = Buffer.allocUnsafe(bytes);
      this.bytes.copy(b, 0, 0, this.used);
      this.bytes = b;
    }
    if (keys + 1 > this.live.length) {
      const starts = new Uint32Array(keys + 2);
      starts.set(this.starts.subarray(0, this.count + 1));
      this.starts = starts;
      const live = new Uint8Array(keys + 1);
      live.set(this.live.subarray(0, this.count));
      this.live = live;
      const prev = new Int32Array(keys + 1);
      prev.set(this.prev.subarray(0, this.count));
      this.prev = prev;
    }
    let size = this.slots.length;
    while (10 * keys > 7 * size) size *= 2;
    if (size > this.slots.length) this.rehash(size);
  }

  /** Empty, ids from 0 again. */
  clear(): void {
    this.used = 0;
    this.count = 0;
    this.liveCount = 0;
    this.starts = new Uint32Array(1025);
    this.live = new Uint8Array(1024);
    this.prev = new Int32Array(1024);
    this.slots = new Int32Array(2048);
    this.bytes = Buffer.allocUnsafe(1 << 12);
    this.generation++;
  }

  /** k's UTF-8 bytes into `scratch`; their length. */
  private encode(k: GroupKey): number {
    if (this.scratch.length < 3 * k.length) this.scratch = Buffer.allocUnsafe(Math.max(3 * k.length, 2 * this.scratch.length));
    const len = this.scratch.write(k, 0, 'utf8');
    // UTF-8 replaces a lone surrogate: such a key would not come back as it was
    if (len !== k.length && LONE_SURROGATE.test(k)) throw new Error(`a group key that is not well-formed UTF-16: ${JSON.stringify(k)}`);
    return len;
  }

  private find(len: number, h: number): number {
    const mask = this.slots.length - 1;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const v = this.slots[s];
      if (v === 0) return -1;
      if (this.same(v - 1, len)) return v - 1;
    }
  }

  private same(id: number, len: number): boolean {
    const from = this.starts[id];
    if (this.starts[id + 1] - from !== len) return false;
    const b = this.bytes;
    const s = this.scratch;
    for (let j = 0; j < len; j++) if (b[from + j] !== s[j]) return false;
    return true;
  }

  private append(len: number): number {
    if (this.used + len > this.bytes.length) {
      const size = Math.max(this.used + len, Math.ceil(1.5 * this.bytes.length));
      if (size > 0xffffffff) throw new Error('group keys past 4 GiB');
      const b = Buffer.allocUnsafe(size);
      this.bytes.copy(b, 0, 0, this.used);
      this.bytes = b;
    }
    // a key is a few dozen bytes: a loop, not Buffer.copy's checks
    const b = this.bytes;
    const sc = this.scratch;
    for (let j = 0, at = this.used; j < len; j++, at++) b[at] = sc[j];
    const id = this.count++;
    if (id + 1 >= this.live.length) {
      const cap = Math.ceil(1.5 * this.live.length);
      const starts = new Uint32Array(cap + 1);
      starts.set(this.starts);
      this.starts = starts;
      const live = new Uint8Array(cap);
      live.set(this.live);
      this.live = live;
      const prev = new Int32Array(cap);
      prev.set(this.prev);
      this.prev = prev;
    }
    this.live[id] = 1;
    this.liveCount++;
    this.used += len;
    this.starts[id + 1] = this.used;
    return id;
  }

  private rehash(size: number): void {
    // the ids in the slots: the latest of each key (a retired one replaced by its key's next id)
    const slots = new Int32Array(size);
    const mask = size - 1;
    for (let j = 0; j < this.slots.length; j++) {
      const v = this.slots[j];
      if (!v) continue;
      let s = hashBytes(this.bytes, this.starts[v - 1], this.starts[v]) & mask;
      while (slots[s] !== 0) s = (s + 1) & mask;
      slots[s] = v;
    }
    this.slots = slots;
  }
}
