// A Lit reactive controller that re-renders its host after every stats message the engine's
// StatsRecorder takes in (1 Hz), following the recorder the host currently points at.

import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { StatsRecorder } from '../engine/stats-recorder.ts';

export class StatsRenderController implements ReactiveController {
  private current: StatsRecorder | undefined;
  private off: (() => void) | undefined;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly recorder: () => StatsRecorder | undefined,
  ) {
    host.addController(this);
  }

  hostUpdate(): void {
    const r = this.recorder();
    if (r === this.current) return;
    this.off?.();
    this.current = r;
    this.off = r?.subscribe(() => this.host.requestUpdate());
  }

  hostConnected(): void {
    this.host.requestUpdate(); // (re)subscribe in the next hostUpdate
  }

  hostDisconnected(): void {
    this.off?.();
    this.off = this.current = undefined;
  }
}
