import { closeSync, fsyncSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';

const MB = 1024 * 1024;

/**
 * What this disk does for a seal of a file this size: read `path` and write a copy of it durably
 * (write, fsync), one megabyte at a time, the work a seal cannot avoid. Answers MB/s of the file.
 */
export function diskCopySpeed(path: string, size: number, copyPath: string): number {
  const input = openSync(path, 'r');
  // The file was just written: its own writeback must not compete with the copy's for the disk.
  fsyncSync(input);
  const started = performance.now();
  const output = openSync(copyPath, 'w');
  try {
    const buffer = Buffer.allocUnsafe(MB);
    for (let at = 0; at < size;) {
      const read = readSync(input, buffer, 0, MB, at);
      if (read === 0) break;
      for (let written = 0; written < read;) written += writeSync(output, buffer, written, read - written);
      at += read;
    }
    fsyncSync(output);
  } finally {
    closeSync(input);
    closeSync(output);
    unlinkSync(copyPath);
  }
  return size / MB / ((performance.now() - started) / 1000);
}
