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

  test('a control packet sent on the channel counts in the record: a late capture buffer is not congestion', () => {
    // A fake channel: bufferedAmount is what was handed over and not yet reported sent.
    const ch = { bufferedAmount: 0, send(d: ArrayBuffer | Uint8Array<ArrayBuffer>) { this.bufferedAmount += d.byteLength; } };
    const q = new SendQueue();
    for (let i = 0; i < 8; i++) q.send(ch, new Uint8Array(1038), 0); // a burst at 0
    ch.bufferedAmount = 0; // all reported sent
    // The next capture buffer comes 21 ms late: 42.7 ms after the last. Meanwhile a 16-byte clock
    // reply went out at 40 ms, and its "sent" report has not reached the worker yet.
    q.send(ch, new Uint8Array(16), 40);
    assert.equal(ch.bufferedAmount, 16);
    const age = q.ageMs(42.7, ch.bufferedAmount);
    assert.ok(Math.abs(age - 2.7) < 1e-9, `the backlog is the clock reply, 2.7 ms old, not the burst before it (${age} ms)`);
  });

  test('the echo of an ArrayBuffer counts its bytes', () => {
    const sent: number[] = [];
    const q = new SendQueue();
    q.send({ send: (d) => sent.push(d.byteLength) }, new ArrayBuffer(700), 5);
    assert.deepEqual(sent, [700]);
    assert.equal(q.ageMs(10, 700), 5);
  });
});
