// SendQueue: the age of a DataChannel's backlog from bufferedAmount and the sender's own record.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LOOK_AGAIN_MS, NO_DRAIN_MS, SendQueue } from '../../workers/send-queue.ts';

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

  describe('congested: a reading over the bound drops frames only once a second look agrees', () => {
    // A fake channel whose bufferedAmount the test sets, and a clock and scheduler it steps.
    function rig() {
      let now = 0;
      const looks: (() => void)[] = [];
      const ch = { bufferedAmount: 0, send(d: ArrayBuffer | Uint8Array<ArrayBuffer>) { this.bufferedAmount += d.byteLength; } };
      const q = new SendQueue((fn) => looks.push(fn), () => now);
      const look = () => looks.splice(0).forEach((f) => f());
      /** One frame offered at `t`: 1 if dropped, else sent (0). */
      const frame = (t: number) => (q.congested(ch, t) ? 1 : (q.send(ch, new Uint8Array(1000), t), 0));
      /** From `from` to before `to`, every LOOK_AGAIN_MS: the clock there, the looks due, one frame offered; the frames dropped. */
      const sendWithLooks = (from: number, to: number) => {
        let dropped = 0;
        for (let t = from; t < to; t += LOOK_AGAIN_MS) {
          now = t;
          look();
          dropped += frame(t);
        }
        return dropped;
      };
      return { q, ch, looks, at: (t: number) => (now = t), look, frame, sendWithLooks };
    }

    test('a stall: the burst after it reads an old backlog, but the look after it finds the channel drained', () => {
      const { q, ch, looks, at, look } = rig();
      for (let k = 0; k < 8; k++) q.send(ch, new Uint8Array(1000), 0); // sent just before a 60 ms stall
      at(60);
      let dropped = 0;
      for (let k = 0; k < 20; k++) if (q.congested(ch, 60)) dropped++; else q.send(ch, new Uint8Array(1000), 60);
      assert.equal(dropped, 0, 'the whole burst goes out');
      assert.equal(looks.length, 1, 'one second look, not one per frame');
      ch.bufferedAmount = 0; // the "sent" reports arrive
      at(68);
      look();
      q.send(ch, new Uint8Array(1000), 69);
      assert.equal(q.congested(ch, 69), false);
    });

    test('a congested link: the look agrees, and frames drop while the backlog stays over the bound', () => {
      const { q, ch, at, look } = rig();
      for (let k = 0; k < 30; k++) q.send(ch, new Uint8Array(1000), k * 2.667); // nothing drains yet
      at(30 * 2.667);
      assert.equal(q.congested(ch, 30 * 2.667), false, 'the first reading over the bound only looks again');
      q.send(ch, new Uint8Array(1000), 30 * 2.667);
      for (const k of [31, 32]) {
        assert.equal(q.congested(ch, k * 2.667), false, 'until the look, frames go out');
        q.send(ch, new Uint8Array(1000), k * 2.667);
      }
      ch.bufferedAmount -= 1000; // the link takes one packet while we hand over three
      at(33 * 2.667);
      look();
      assert.equal(q.congested(ch, 33 * 2.667), true, 'confirmed');
      assert.equal(q.congested(ch, 34 * 2.667), true);
      ch.bufferedAmount = 1000; // drained down to the last packet
      assert.equal(q.congested(ch, 35 * 2.667), false, 'under the bound: sent');
    });

    test('a link that takes nothing while we send: the looks wait NO_DRAIN_MS for a report, then agree', () => {
      const { q, ch, looks, at, look } = rig();
      for (let k = 0; k < 30; k++) q.send(ch, new Uint8Array(1000), k * 2.667);
      let t = 30 * 2.667;
      at(t);
      assert.equal(q.congested(ch, t), false);
      const from = t;
      let confirmedAt = NaN;
      while (t < from + 2 * NO_DRAIN_MS) {
        q.send(ch, new Uint8Array(1000), t); // frames keep going out until a look agrees
        t += LOOK_AGAIN_MS;
        at(t);
        look();
        if (q.congested(ch, t)) {
          confirmedAt = t;
          break;
        }
      }
      // Counted from the first look that finds more than the reading's own frame handed over (one
      // frame per look here: the second look), then to the look after NO_DRAIN_MS.
      assert.ok(confirmedAt - from >= NO_DRAIN_MS && confirmedAt - from < NO_DRAIN_MS + 3 * LOOK_AGAIN_MS, `confirmed ${confirmedAt - from} ms after the first reading`);
      assert.equal(looks.length, 0, 'no look left scheduled');
    });

    test('a stall whose "sent" reports lag past the first look: the burst and what follows go out', () => {
      // The capture's backlog goes out in the first reading's task; no report comes for 30 ms.
      const { q, ch, at, frame, sendWithLooks } = rig();
      for (let k = 0; k < 8; k++) q.send(ch, new Uint8Array(1000), 0); // sent just before a 60 ms stall
      at(60);
      let dropped = 0;
      for (let k = 0; k < 20; k++) dropped += frame(60);
      dropped += sendWithLooks(60 + LOOK_AGAIN_MS, 90);
      ch.bufferedAmount = 1000; // the reports arrive: only the last frame is queued
      dropped += sendWithLooks(92, 93);
      assert.equal(dropped, 0);
    });

    test('a stall of this machine longer than NO_DRAIN_MS between the first reading and its look: the reports still get their wait', () => {
      // The look and the capture's backlog both wait for the thread; the backlog goes out first,
      // and the look comes before the channel's "sent" reports. Counted from the first reading,
      // that look was past NO_DRAIN_MS and confirmed at once.
      const { q, ch, at, look, frame, sendWithLooks } = rig();
      for (let k = 0; k < 8; k++) q.send(ch, new Uint8Array(1000), 0);
      at(50);
      assert.equal(q.congested(ch, 50), false, 'the first reading only looks again');
      q.send(ch, new Uint8Array(1000), 50);
      at(250); // the stall ends: 200 ms of capture goes out in one task, the look runs after it
      let dropped = 0;
      for (let k = 0; k < 75; k++) dropped += frame(250);
      look();
      dropped += sendWithLooks(250 + LOOK_AGAIN_MS, 280);
      ch.bufferedAmount = 1000; // the reports arrive 30 ms after the stall
      dropped += sendWithLooks(282, 283);
      assert.equal(dropped, 0);
    });

    test('a confirmation stands for a second, then needs another look', () => {
      const { q, ch, at, look } = rig();
      for (let k = 0; k < 30; k++) q.send(ch, new Uint8Array(1000), k * 2.667);
      at(80);
      q.congested(ch, 80);
      q.send(ch, new Uint8Array(1000), 80);
      q.send(ch, new Uint8Array(1000), 82.667);
      ch.bufferedAmount -= 1000; // the link takes one packet while we hand over two
      look();
      assert.equal(q.congested(ch, 500), true);
      at(1100);
      assert.equal(q.congested(ch, 1100), false, 'over a second since the look: look again first');
    });

    test('a look that finds nothing moved (no byte sent, no frame handed over) proves nothing: it looks again', () => {
      const { q, ch, looks, at, look } = rig();
      for (let k = 0; k < 8; k++) q.send(ch, new Uint8Array(1000), 0);
      at(50); // this machine stalls from here: no capture, no "sent" report
      assert.equal(q.congested(ch, 50), false);
      q.send(ch, new Uint8Array(1000), 50);
      at(58);
      look();
      assert.equal(looks.length, 1, 'another look is scheduled');
      at(70); // the stall ends: the capture's backlog comes as one burst, the reports not yet
      for (let k = 0; k < 16; k++) {
        assert.equal(q.congested(ch, 70), false, `burst frame ${k} goes out`);
        q.send(ch, new Uint8Array(1000), 70);
      }
      ch.bufferedAmount = 2000; // the reports arrive: only the end of the burst is queued
      at(78);
      look();
      assert.equal(q.congested(ch, 78), false);
    });

    test('looks at a channel where nothing moves (closed meanwhile) stop after a second', () => {
      const { q, ch, looks, at, look } = rig();
      for (let k = 0; k < 8; k++) q.send(ch, new Uint8Array(1000), 0);
      at(50);
      q.congested(ch, 50);
      for (let t = 58; t < 1200; t += 8) {
        at(t);
        look();
      }
      assert.equal(looks.length, 0, 'no look left scheduled');
    });
  });
});
