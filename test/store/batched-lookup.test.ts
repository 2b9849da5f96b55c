import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { BatchedLookup } from '../../src/store/db/batched-lookup.js';

/** A lookup over a fixed table that records the keys of each statement it was asked to run. */
function recordingLookup(table: Record<string, string>, options: { maxKeys?: number } = {}) {
  const statements: string[][] = [];
  const lookup = new BatchedLookup(async (keys: string[]) => {
    statements.push(keys);
    return new Map(keys.filter((key) => key in table).map((key) => [key, table[key]!]));
  }, options);
  return { lookup, statements };
}

describe('BatchedLookup: one statement for the keys asked for in one turn of the event loop', () => {
  it('keys asked for together go in one statement, each distinct key once; every caller gets its own row', async () => {
    const { lookup, statements } = recordingLookup({ a: 'row a', b: 'row b', c: 'row c' });
    const answers = await Promise.all(['a', 'b', 'a', 'missing', 'c', 'b'].map((key) => lookup.get(key)));
    assert.deepEqual(answers, ['row a', 'row b', 'row a', undefined, 'row c', 'row b']);
    assert.deepEqual(statements, [['a', 'b', 'missing', 'c']]);
  });

  it('a key asked for in a later turn gets a statement of its own, run after it was asked', async () => {
    const table: Record<string, string> = { a: 'first' };
    const { lookup, statements } = recordingLookup(table);
    assert.equal(await lookup.get('a'), 'first');
    table.a = 'changed';
    await nextTurn();
    assert.equal(await lookup.get('a'), 'changed', 'nothing is served from an earlier statement');
    assert.deepEqual(statements, [['a'], ['a']]);
  });

  it('more distinct keys than a statement takes are split over several statements', async () => {
    const { lookup, statements } = recordingLookup(
      { a: '1', b: '2', c: '3', d: '4', e: '5' },
      { maxKeys: 2 },
    );
    const answers = await Promise.all(['a', 'b', 'a', 'c', 'd', 'c', 'e'].map((key) => lookup.get(key)));
    assert.deepEqual(answers, ['1', '2', '1', '3', '4', '3', '5']);
    assert.deepEqual(statements, [['a', 'b'], ['c', 'd'], ['e']]);
  });

  it('a failed statement fails every caller of its batch and no other', async () => {
    let calls = 0;
    const lookup = new BatchedLookup(
      async (keys: string[]) => {
        calls++;
        if (keys.includes('bad')) throw new Error('statement failed');
        return new Map(keys.map((key) => [key, key.toUpperCase()]));
      },
      { maxKeys: 2 },
    );
    const settled = await Promise.allSettled(['ok', 'bad', 'ok', 'fine'].map((key) => lookup.get(key)));
    assert.deepEqual(
      settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message)),
      ['statement failed', 'statement failed', 'statement failed', 'FINE'],
    );
    assert.equal(calls, 2);
  });

  it('a lookup that throws before returning a promise rejects its callers instead of escaping', async () => {
    const lookup = new BatchedLookup<string, string>(() => {
      throw new Error('thrown at once');
    });
    await assert.rejects(lookup.get('a'), /thrown at once/);
  });
});
