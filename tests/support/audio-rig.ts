// The audio rig's life cycle (Node): a private PulseAudio with null devices and an Xvfb display,
// started for one bench run (the mouth-to-ear scenario) or one browser test on a real device, and
// always stopped again. Headless Chromium plays into no audio device, so the browsers run headed
// on this display against this sound server.
//
// Devices: `micsink` (its monitor, remapped as the source `mic`, is every sender's microphone),
// `spk` (every player's output; its monitor is what the recorder hears), `silent` (outputs and
// inputs nobody should hear), and `both`, which plays one stream into micsink and spk at once.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** Programs the rig runs, with the Debian package that has each. */
const TOOLS: readonly [string, string][] = [
  ['Xvfb', 'xvfb'],
  ['pulseaudio', 'pulseaudio'],
  ['pactl', 'pulseaudio-utils'],
  ['parec', 'pulseaudio-utils'],
];

/** Why the rig cannot run here (missing programs and the packages to install), or null. */
export function rigUnavailable(): string | null {
  const missing = TOOLS.filter(([bin]) => !onPath(bin));
  if (!missing.length) return null;
  const pkgs = [...new Set(missing.map(([, p]) => p))];
  return `${missing.map(([b]) => b).join(', ')} not found (apt-get install -y ${pkgs.join(' ')})`;
}

function onPath(bin: string): boolean {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    try {
      accessSync(join(dir, bin), constants.X_OK);
      return true;
    } catch {
      // not in this directory
    }
  }
  return false;
}

export interface Rig {
  /** For PULSE_SERVER. */
  pulseServer: string;
  /** For DISPLAY, e.g. ':3'. */
  display: string;
  /** Private folder for this run's signals and recordings; removed on close. */
  dir: string;
  /** Environment for a PulseAudio client: this server, and the default output and input it should use. */
  env(sink?: string, source?: string): NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/** Starts PulseAudio and Xvfb; on any failure stops what did start. */
export async function startRig(log: (s: string) => void): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), 'tutti-m2e-'));
  const children: ChildProcess[] = [];
  // A bench that exits or is stopped must not leave a sound server or display behind. On a signal
  // the children go first, then the signal is raised again for Node's default handling.
  const onExit = () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL'));
  const onSignal = (sig: NodeJS.Signals) => {
    onExit();
    process.kill(process.pid, sig);
  };
  process.on('exit', onExit);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const close = async () => {
    for (const c of children.reverse()) await stop(c);
    process.off('exit', onExit);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const pulseServer = `unix:${join(dir, 'pulse.sock')}`;
    const home = pulseHome(dir);
    const env = (sink?: string, source?: string): NodeJS.ProcessEnv => ({
      ...process.env,
      ...home,
      PULSE_SERVER: pulseServer,
      ...(sink ? { PULSE_SINK: sink } : {}),
      ...(source ? { PULSE_SOURCE: source } : {}),
    });
    const pulse = spawn('pulseaudio', ['-n', '-F', writeScript(dir), '--daemonize=no', '--use-pid-file=no', '--exit-idle-time=-1', '--log-target=stderr'], {
      env: { ...process.env, ...home },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(pulse);
    const pulseLog = collect(pulse);
    await waitFor(() => spawnSync('pactl', ['info'], { env: env(), stdio: 'ignore', timeout: 2000 }).status === 0, 10_000, () => `PulseAudio did not start: ${pulseLog().slice(-2000)}`);
    // Browsers open the server's default rate: anything but 48 kHz resamples every path measured.
    const spec = /Default Sample Specification: (.*)/.exec(spawnSync('pactl', ['info'], { env: env(), encoding: 'utf8' }).stdout)?.[1];
    if (!spec?.includes('48000Hz')) throw new Error(`PulseAudio runs at ${spec ?? 'an unknown rate'}, not 48 kHz: its daemon.conf was not read`);

    // -displayfd: Xvfb takes the first free display itself (no race with other displays on the machine).
    const xvfb = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '1280x800x24', '-nolisten', 'tcp'], { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
    children.push(xvfb);
    const xLog = collect(xvfb);
    const display = await new Promise<string>((resolve, reject) => {
      let text = '';
      const fd3 = xvfb.stdio[3] as NodeJS.ReadableStream;
      fd3.on('data', (b: Buffer) => {
        text += b.toString();
        if (text.includes('\n')) resolve(`:${text.trim()}`);
      });
      xvfb.on('exit', (code) => reject(new Error(`Xvfb exited (${code}): ${xLog().slice(-2000)}`)));
      setTimeout(() => reject(new Error('Xvfb did not report a display in 10 s')), 10_000).unref();
    });
    log(`m2e rig: PulseAudio at ${pulseServer}, Xvfb on ${display}`);
    return { pulseServer, display, dir, env, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** PulseAudio keeps its state under HOME and the XDG folders: private ones, so nothing leaks between runs. */
function pulseHome(dir: string): Record<string, string> {
  const home = join(dir, 'home');
  // Under HOME: PulseAudio 16 running as root did not read a daemon.conf from an XDG_CONFIG_HOME
  // elsewhere (the server came up at 44.1 kHz and every browser stream was resampled).
  const config = join(home, '.config');
  const runtime = join(dir, 'run');
  for (const d of [home, join(config, 'pulse'), runtime]) mkdirSync(d, { recursive: true });
  chmodSync(runtime, 0o700); // PulseAudio refuses a runtime dir others can read
  // 48 kHz everywhere so nothing resamples; 2 × 2 ms fragments keep the server's own buffering small.
  writeFileSync(join(config, 'pulse', 'daemon.conf'), [
    'default-sample-rate = 48000',
    'alternate-sample-rate = 48000',
    'default-fragments = 2',
    'default-fragment-size-msec = 2',
    'exit-idle-time = -1',
    'flat-volumes = no',
    '',
  ].join('\n'));
  return { HOME: home, XDG_CONFIG_HOME: config, XDG_RUNTIME_DIR: runtime };
}

function writeScript(dir: string): string {
  const path = join(dir, 'rig.pa');
  writeFileSync(path, [
    'load-module module-null-sink sink_name=micsink rate=48000',
    'load-module module-null-sink sink_name=spk rate=48000',
    'load-module module-null-sink sink_name=silent rate=48000',
    'load-module module-remap-source master=micsink.monitor source_name=mic',
    // adjust_time=0: otherwise the combine sink resamples its micsink slave (48143 Hz was seen) and
    // the direct-vs-browser gap drifts by about 1 ms/s within a recording.
    'load-module module-combine-sink sink_name=both slaves=micsink,spk rate=48000 adjust_time=0',
    `load-module module-native-protocol-unix auth-anonymous=1 socket=${join(dir, 'pulse.sock')}`,
    'set-default-sink spk',
    'set-default-source mic',
    '',
  ].join('\n'));
  return path;
}

/** Keeps the last 64 kB a child wrote to stderr, for error messages. */
function collect(c: ChildProcess): () => string {
  let text = '';
  c.stderr?.on('data', (b: Buffer) => {
    text = (text + b.toString()).slice(-65536);
  });
  return () => text;
}

async function waitFor(ok: () => boolean, ms: number, why: () => string): Promise<void> {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error(why());
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** SIGTERM, then SIGKILL after 3 s; resolves once the child is gone. */
export async function stop(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return;
  const gone = new Promise<void>((r) => c.once('exit', () => r()));
  c.kill('SIGTERM');
  const t = setTimeout(() => c.kill('SIGKILL'), 3000);
  await gone;
  clearTimeout(t);
}
