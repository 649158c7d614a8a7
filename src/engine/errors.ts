// User-facing errors of the audio engine: each says what went wrong and what to do about it.

export class TuttiError extends Error {
  constructor(
    readonly code: 'not-isolated' | 'mic-denied' | 'no-input' | 'mic-busy' | 'no-audioworklet' | 'worker' | 'room-full',
    message: string,
  ) {
    super(message);
    this.name = 'TuttiError';
  }
}

/** Translate a getUserMedia failure into an actionable message. */
export function micError(err: unknown): TuttiError {
  const name = err instanceof DOMException ? err.name : '';
  switch (name) {
    case 'NotAllowedError':
    case 'SecurityError':
      return new TuttiError(
        'mic-denied',
        'Microphone access was denied. Allow the microphone for this site (the icon left of the address bar), then press Join again.',
      );
    case 'NotFoundError':
    case 'OverconstrainedError':
      return new TuttiError('no-input', 'No audio input device was found. Plug in a microphone or audio interface, then press Join again.');
    case 'NotReadableError':
    case 'AbortError':
      return new TuttiError('mic-busy', 'The audio input is in use by another program or could not be opened. Close that program, then press Join again.');
    default:
      return new TuttiError('no-input', `Could not open the audio input: ${err instanceof Error ? err.message : String(err)}`);
  }
}

export function isolationError(): TuttiError {
  return new TuttiError(
    'not-isolated',
    'This page is not cross-origin isolated, so low-latency audio (SharedArrayBuffer) is unavailable. Open Tutti from its own server (npm start), which sends the COOP/COEP headers, or reload once the app is installed.',
  );
}
