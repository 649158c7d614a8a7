// Pure parts of the service worker and of the ICE configuration, in Node: the isolation headers the
// service worker adds (workers/sw/isolation.ts), cache versioning (workers/sw/version.ts), ICE
// server validation (src/shared/ice-servers.ts) and the server's /config.json.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withIsolationHeaders } from '../../workers/sw/isolation.ts';
import { manifestVersion, outdatedCaches } from '../../workers/sw/version.ts';
import { parseIceServers } from '../../src/shared/ice-servers.ts';
import { ConfigError, clientConfigFromEnv } from '../../server/config.ts';
import { createAppServer } from '../../server/http.ts';

describe('service worker isolation headers', () => {
  test('adds COOP, COEP and CORP, keeping status, other headers and the body', async () => {
    const original = new Response('hello', { status: 201, statusText: 'Made', headers: { 'Content-Type': 'text/plain', 'X-Keep': '1' } });
    const r = withIsolationHeaders(original);
    assert.equal(r.status, 201);
    assert.equal(r.statusText, 'Made');
    assert.equal(r.headers.get('cross-origin-opener-policy'), 'same-origin');
    assert.equal(r.headers.get('cross-origin-embedder-policy'), 'require-corp');
    assert.equal(r.headers.get('cross-origin-resource-policy'), 'same-origin');
    assert.equal(r.headers.get('content-type'), 'text/plain');
    assert.equal(r.headers.get('x-keep'), '1');
    assert.equal(await r.text(), 'hello');
  });

  test('replaces a weaker policy, and returns the same response when all three are already set', () => {
    const weak = withIsolationHeaders(new Response('x', { headers: { 'Cross-Origin-Embedder-Policy': 'unsafe-none' } }));
    assert.equal(weak.headers.get('cross-origin-embedder-policy'), 'require-corp');
    assert.equal(withIsolationHeaders(weak), weak);
  });

  test('leaves network-error responses (status 0) alone', () => {
    const err = Response.error();
    assert.equal(withIsolationHeaders(err), err);
  });

  test('null-body statuses stay valid', () => {
    const r = withIsolationHeaders(new Response(null, { status: 204 }));
    assert.equal(r.status, 204);
    assert.equal(r.body, null);
  });
});

describe('cache versions', () => {
  const manifest = [
    { url: 'index.html', revision: 'a1' },
    { url: 'assets/net.worker-X.js', revision: null },
  ];
  test('same content, same version, in any order; any change, a new version', () => {
    const v = manifestVersion(manifest);
    assert.match(v, /^[0-9a-f]{8}$/);
    assert.equal(manifestVersion([...manifest].reverse()), v);
    assert.notEqual(manifestVersion([{ url: 'index.html', revision: 'a2' }, manifest[1]!]), v);
    assert.notEqual(manifestVersion([manifest[0]!, { url: 'assets/net.worker-Y.js', revision: null }]), v);
    assert.notEqual(manifestVersion(manifest.slice(0, 1)), v);
  });

  test('only Tutti caches of other versions are outdated', () => {
    const names = ['tutti-precache-aaaa', 'tutti-runtime-aaaa', 'tutti-precache-bbbb', 'tutti-runtime-bbbb', 'other-app', 'tutti-notes'];
    assert.deepEqual(outdatedCaches(names, 'bbbb'), ['tutti-precache-aaaa', 'tutti-runtime-aaaa']);
  });
});

describe('ICE servers', () => {
  test('accepts STUN and TURN with credentials; empty text is no servers', () => {
    assert.deepEqual(parseIceServers(''), { ok: true, servers: [] });
    const text = '[{"urls":"stun:stun.example.org:3478"},{"urls":["turns:t.example.org:5349?transport=tcp"],"username":"u","credential":"p"}]';
    assert.deepEqual(parseIceServers(text), {
      ok: true,
      servers: [{ urls: 'stun:stun.example.org:3478' }, { urls: ['turns:t.example.org:5349?transport=tcp'], username: 'u', credential: 'p' }],
    });
  });

  for (const [text, error] of [
    ['[{', /not valid JSON/],
    ['{"urls":"stun:x"}', /must be a JSON array/],
    ['["stun:x"]', /ICE server 1: must be an object/],
    ['[{"url":"stun:x"}]', /unknown field "url"/],
    ['[{"urls":[]}]', /non-empty array/],
    ['[{"urls":"stun:a"},{"urls":"https://x"}]', /ICE server 2: "https:\/\/x" is not a stun:/],
    ['[{"urls":"turn:x","username":"u"}]', /TURN server needs "username" and "credential"/],
    ['[{"urls":"stun:x","username":5}]', /"username" must be a string/],
  ] as const) {
    test(`refuses ${text}`, () => {
      const r = parseIceServers(text);
      assert.equal(r.ok, false);
      if (!r.ok) assert.match(r.error, error);
    });
  }

  test('TUTTI_ICE_SERVERS: parsed, or a ConfigError naming the variable', () => {
    assert.deepEqual(clientConfigFromEnv({}), { iceServers: [] });
    assert.deepEqual(clientConfigFromEnv({ TUTTI_ICE_SERVERS: '[{"urls":"stun:s:1"}]' }), { iceServers: [{ urls: 'stun:s:1' }] });
    assert.throws(() => clientConfigFromEnv({ TUTTI_ICE_SERVERS: 'stun:s:1' }), (e: unknown) => e instanceof ConfigError && /^TUTTI_ICE_SERVERS: ICE servers are not valid JSON/.test(e.message));
  });

  test('the server answers /config.json with its ICE servers', async () => {
    const app = createAppServer({ root: null, clientConfig: { iceServers: [{ urls: 'stun:s:1' }] } });
    await new Promise<void>((r) => app.server.listen(0, '127.0.0.1', r));
    try {
      const res = await fetch(`http://127.0.0.1:${(app.server.address() as { port: number }).port}/config.json`);
      assert.equal(res.headers.get('content-type'), 'application/json');
      assert.deepEqual(await res.json(), { iceServers: [{ urls: 'stun:s:1' }] });
    } finally {
      await app.close();
    }
  });
});
