// Whether a fault test that needs system tools (nftables and root for network namespaces, coturn)
// runs, skips or fails (Node side of tests/e2e/netfaults.spec.ts). On a developer's machine a
// missing tool skips the test with its reason. In CI (the CI variable set, as `.ci/run` runs,
// which installs the tools) it fails with that reason: `npm test` must not stay green while the
// network-fault tests silently did nothing.

export type ToolVerdict = { run: true } | { run: false; skip: boolean; reason: string };

/** CI as most runners set it: any value but empty, 0 or false. */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env['CI'] ?? '').trim().toLowerCase();
  return v !== '' && v !== '0' && v !== 'false';
}

/** `why` is the tools' own reason they cannot be used here (null: they can). */
export function toolVerdict(what: string, why: string | null, env: NodeJS.ProcessEnv = process.env): ToolVerdict {
  if (why === null) return { run: true };
  if (isCi(env)) return { run: false, skip: false, reason: `${what}: required in CI (CI=${env['CI']}) but unavailable: ${why}. .ci/run installs nftables, coturn and iproute2 and runs as root.` };
  return { run: false, skip: true, reason: `${what}: unavailable: ${why}` };
}

/** In a Playwright test body: return to run, skip with the reason, or throw it (CI). */
export function requireTools(test: { skip(condition: boolean, description: string): void }, what: string, why: string | null): void {
  const v = toolVerdict(what, why);
  if (v.run) return;
  if (v.skip) test.skip(true, v.reason);
  else throw new Error(v.reason);
}
