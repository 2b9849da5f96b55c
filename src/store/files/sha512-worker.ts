import { createHash, type Hash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import type { DigestAnswer, DigestRequest } from './parallel-sha512.js';

/** A stream being hashed: its digest so far and the ring its slots are read from. */
interface Hashing {
  hash: Hash;
  ring: SharedArrayBuffer;
  slotBytes: number;
}

const streams = new Map<number, Hashing>();

/**
 * The thread of Sha512Thread (parallel-sha512.ts): hashes the slots each stream fills in its shared
 * ring, in the order they come, and hands every slot back as soon as it is hashed.
 */
parentPort?.on('message', (request: DigestRequest) => {
  switch (request.type) {
    case 'open':
      streams.set(request.id, {
        hash: createHash('sha512'),
        ring: request.ring,
        slotBytes: request.slotBytes,
      });
      break;
    case 'update': {
      const stream = streams.get(request.id);
      stream?.hash.update(new Uint8Array(stream.ring, request.slot * stream.slotBytes, request.length));
      answer({ type: 'free', id: request.id, slot: request.slot });
      break;
    }
    case 'end': {
      const stream = streams.get(request.id);
      streams.delete(request.id);
      if (stream) answer({ type: 'digest', id: request.id, hex: stream.hash.digest('hex') });
      break;
    }
    case 'drop':
      streams.delete(request.id);
      break;
  }
});

function answer(message: DigestAnswer): void {
  parentPort?.postMessage(message);
}
