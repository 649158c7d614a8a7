// The device choices a computer remembers (src/engine/devices.ts): found again by id or, where the
// id changed, by label; the default is remembered as no choice; bad storage loses nothing else;
// the input channels chosen per input device; which device channels become our left and right.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_DEVICE, findDevice, rememberDevice, rememberInputChannels, rememberedDevices, rememberedInputChannels } from '../../src/engine/devices.ts';
import { inputPlanes, parseInputChannels } from '../../src/shared/input-channels.ts';

function memoryStorage(init: Record<string, string> = {}): Pick<Storage, 'getItem' | 'setItem'> & { data: Record<string, string> } {
  const data = { ...init };
  return { data, getItem: (k) => data[k] ?? null, setItem: (k, v) => void (data[k] = v) };
}

const list = [DEFAULT_DEVICE, { id: 'a1', label: 'Scarlett 2i2' }, { id: 'b2', label: 'USB headset' }];

describe('remembered audio devices', () => {
  it('finds a device by id, else by label, else not at all; the default always', () => {
    assert.deepEqual(findDevice(list, { id: 'b2', label: 'renamed' }), list[2]);
    assert.deepEqual(findDevice(list, { id: 'zz', label: 'Scarlett 2i2' }), list[1]);
    assert.equal(findDevice(list, { id: 'zz', label: 'Gone' }), null);
    assert.equal(findDevice(list, { id: 'zz', label: '' }), null);
    assert.equal(findDevice(list, undefined), DEFAULT_DEVICE);
  });

  it('remembers each kind apart; choosing the default forgets the choice', () => {
    const st = memoryStorage();
    rememberDevice('input', list[1]!, st);
    rememberDevice('output', list[2]!, st);
    assert.deepEqual(rememberedDevices(st), { input: list[1], output: list[2] });
    rememberDevice('output', DEFAULT_DEVICE, st);
    assert.deepEqual(rememberedDevices(st), { input: list[1] });
  });

  it('unreadable or malformed storage gives the defaults', () => {
    assert.deepEqual(rememberedDevices(memoryStorage({ 'tutti.devices': '{not json' })), {});
    assert.deepEqual(rememberedDevices(memoryStorage({ 'tutti.devices': '{"input": {"id": 3}, "output": "x"}' })), {});
    assert.deepEqual(rememberedDevices(memoryStorage({ 'tutti.devices': 'null' })), {});
  });
});

describe('input channels', () => {
  it('are remembered per input device, next to the device choices, and "both" is no choice', () => {
    const st = memoryStorage();
    rememberDevice('input', list[1]!, st);
    rememberInputChannels('a1', 'second', st);
    rememberInputChannels('', 'first', st);
    assert.equal(rememberedInputChannels('a1', st), 'second');
    assert.equal(rememberedInputChannels('', st), 'first');
    assert.equal(rememberedInputChannels('b2', st), 'both');
    assert.deepEqual(rememberedDevices(st).input, list[1], 'the device choice is kept');
    rememberDevice('output', list[2]!, st);
    assert.equal(rememberedInputChannels('a1', st), 'second', 'a device choice keeps the channels');
    rememberInputChannels('a1', 'both', st);
    rememberInputChannels('', 'both', st);
    assert.deepEqual(rememberedDevices(st), { input: list[1], output: list[2] });
  });

  it('malformed channel entries are dropped, the rest kept', () => {
    const st = memoryStorage({ 'tutti.devices': '{"inputChannels": {"a1": "second", "b2": "left", "c3": 7}, "input": {"id": "a1", "label": "Scarlett 2i2"}}' });
    assert.deepEqual(rememberedDevices(st), { input: list[1], inputChannels: { a1: 'second' } });
    assert.equal(parseInputChannels('both'), 'both');
    assert.equal(parseInputChannels('stereo'), null);
  });

  it('map to the device planes read into our left and right; a one-channel device gives its channel to every choice', () => {
    assert.deepEqual(inputPlanes('both', 2), [0, 1]);
    assert.deepEqual(inputPlanes('first', 2), [0, 0]);
    assert.deepEqual(inputPlanes('second', 2), [1, 1]);
    assert.deepEqual(inputPlanes('second', 4), [1, 1]);
    for (const c of ['both', 'first', 'second'] as const) assert.deepEqual(inputPlanes(c, 1), [0, 0]);
  });
});
