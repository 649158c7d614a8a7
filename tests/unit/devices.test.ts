// The device choices a computer remembers (src/engine/devices.ts): found again by id or, where the
// id changed, by label; the default is remembered as no choice; bad storage loses nothing else.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_DEVICE, findDevice, rememberDevice, rememberedDevices } from '../../src/engine/devices.ts';

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
