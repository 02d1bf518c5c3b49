// The stale-reply rule shared by the host and the webviews (src/protocol/channel.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Latest } from '../../src/protocol/channel';

test('a reply is current only while no newer request was issued', () => {
  const l = new Latest();
  const a = l.issue();
  assert.equal(l.current(a), true);
  const b = l.issue();
  assert.ok(b > a);
  assert.equal(l.current(a), false, 'the older reply arriving late is dropped');
  assert.equal(l.current(b), true);
  assert.equal(l.current(undefined), false);
});

test('an id seen from the other side replaces the latest, older and newer ones are not current', () => {
  const shown = new Latest();
  shown.see(7);
  assert.equal(shown.current(7), true);
  assert.equal(shown.current(6), false, 'a read-out of a view already replaced');
  assert.equal(shown.current(8), false, 'a read-out of a view this side never showed');
});
