// A FileSystemSyncAccessHandle in memory (workers/wav-writer.ts SyncFile), for the recorder's
// unit tests: a quota past which a write throws (as the Origin Private File System does) or is cut
// short, and what a crash would leave (the content as of the last flush).

import type { SyncFile } from '../../workers/wav-writer.ts';

export /** A file in memory, with a quota in bytes: a write past it throws (as OPFS does) or is cut short. */
class FakeFile implements SyncFile {
  bytes = new Uint8Array(1 << 16);
  size = 0;
  /** What a crash would leave: the file as of the last flush (a crash may lose unflushed writes). */
  flushed = new Uint8Array(0);
  closed = false;
  constructor(
    private readonly quota = Infinity,
    private readonly shortWrites = false,
  ) {}
  write(buffer: Uint8Array, options: { at: number }): number {
    const end = options.at + buffer.length;
    if (end > this.quota) {
      if (!this.shortWrites) throw new DOMException('quota', 'QuotaExceededError');
      const n = Math.max(0, this.quota - options.at);
      this.put(buffer.subarray(0, n), options.at);
      return n;
    }
    this.put(buffer, options.at);
    return buffer.length;
  }
  private put(b: Uint8Array, at: number): void {
    while (at + b.length > this.bytes.length) {
      const bigger = new Uint8Array(this.bytes.length * 2);
      bigger.set(this.bytes);
      this.bytes = bigger;
    }
    this.bytes.set(b, at);
    this.size = Math.max(this.size, at + b.length);
  }
  read(buffer: Uint8Array, options: { at: number }): number {
    const n = Math.max(0, Math.min(buffer.length, this.size - options.at));
    buffer.set(this.bytes.subarray(options.at, options.at + n));
    return n;
  }
  getSize(): number {
    return this.size;
  }
  /** As OPFS: a larger size pads with zeros (refused past the quota), a smaller one cuts. */
  truncate(size: number): void {
    if (size > this.quota) throw new DOMException('quota', 'QuotaExceededError');
    if (size < this.size) this.bytes.fill(0, size, this.size);
    else this.put(new Uint8Array(size - this.size), this.size);
    this.size = size;
  }
  flush(): void {
    this.flushed = this.bytes.slice(0, this.size);
  }
  close(): void {
    this.closed = true;
  }
  content(): Uint8Array {
    return this.bytes.slice(0, this.size);
  }
}
