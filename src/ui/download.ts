// Save text the page produced (stats JSON, trace CSV) as a file download (main thread).

export function downloadText(filename: string, mime: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: mime }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A filename-safe local timestamp, e.g. 2026-11-21T06-30-05. */
export function fileStamp(d = new Date()): string {
  return d.toISOString().slice(0, 19).replace(/:/g, '-');
}
