// SendQueue: the age of a DataChannel's backlog from bufferedAmount and the sender's own record.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SendQueue } from '../../workers/send-queue.ts';

describe('SendQueue', () => {
  test('a burst of 8 packets handed over at once is 0 ms old, however much of it is still queued', () => {
    const q = new SendQueue();
    for (let b = 0; b < 20; b++) {
      const t = b * 21.333;
      for (let i = 0; i < 8; i++) q.record(t, 1038);
      assert.equal(q.ageMs(t, 8 * 1038), 0, 'the whole burst still queued');
      assert.equal(q.ageMs(t, 0), 0);
    }
  });

  test('a backlog reads as old as the packet at its head', () => {
    const q = new SendQueue();
    for (let k = 0; k < 40; k++) q.record(k * 2.667, 1000); // one packet per quantum
    const now = 39 * 2.667;
    assert.ok(Math.abs(q.ageMs(now, 1000) - 0) < 1e-9, 'only the last packet queued');
    assert.ok(Math.abs(q.ageMs(now, 2000) - 2.667) < 1e-9, 'the last two');
    assert.ok(Math.abs(q.ageMs(now, 17_000) - 16 * 2.667) < 1e-9, '17 packets: the head was sent 16 quanta ago');
    assert.ok(Math.abs(q.ageMs(now, 16_500) - 16 * 2.667) < 1e-9, 'a partly sent head packet counts from its own send');
  });

  test('a backlog older than the history reads at least as old as the history', () => {
    const q = new SendQueue();
    for (let k = 0; k < 1000; k++) q.record(k, 100);
    assert.ok(q.ageMs(999, 100_000) >= 127, String(q.ageMs(999, 100_000)));
  });
});
