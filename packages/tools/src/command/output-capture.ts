/**
 * Collects a stream's bytes up to a cap, keeping its start (`head`, for stdout: results come first) or its end
 * (`tail`, for stderr: the error that ended a program comes last), and counting every byte. Bytes past the cap are
 * read and dropped, so a chatty program never blocks on a full pipe.
 */
export class OutputCapture {
  private chunks: Buffer[] = [];
  private keptBytes = 0;
  /** Every byte the stream produced, kept or not. */
  totalBytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly keep: 'head' | 'tail',
  ) {}

  write(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    if (this.keep === 'head') {
      const room = this.maxBytes - this.keptBytes;
      if (room <= 0) return;
      const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.chunks.push(kept);
      this.keptBytes += kept.length;
      return;
    }
    this.chunks.push(chunk);
    this.keptBytes += chunk.length;
    while (this.chunks.length > 1 && this.keptBytes - this.chunks[0]!.length >= this.maxBytes) {
      this.keptBytes -= this.chunks.shift()!.length;
    }
  }

  /** Whether bytes were dropped. */
  get truncated(): boolean {
    return this.totalBytes > this.maxBytes;
  }

  /** The kept bytes as UTF-8 text, never starting or ending inside a character. */
  text(): string {
    let bytes = Buffer.concat(this.chunks);
    if (this.keep === 'tail' && bytes.length > this.maxBytes) {
      bytes = bytes.subarray(bytes.length - this.maxBytes);
    }
    if (this.keep === 'tail' && this.truncated) {
      // Skips the continuation bytes of a character cut at the start.
      let start = 0;
      while (start < 3 && start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
      bytes = bytes.subarray(start);
    }
    // Streaming mode without a final flush leaves out a character cut at the end.
    return new TextDecoder().decode(bytes, { stream: this.truncated });
  }

  /** A sentence saying what was dropped, or undefined when nothing was. */
  note(stream: 'stdout' | 'stderr'): string | undefined {
    if (!this.truncated) return undefined;
    const which = this.keep === 'head' ? 'first' : 'last';
    return `${stream} was cut: showing the ${which} ${this.maxBytes} of ${this.totalBytes} bytes. Ask for less output (a filter, a range, a count) if you need the rest.`;
  }
}
