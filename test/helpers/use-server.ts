import { after, before } from 'node:test';
import { makeStore, startServer, type StartOptions, type TestServer, type TestStore } from './server.js';
import { startSmtp, type TestSmtp } from './smtp.js';

/**
 * Something a describe's tests share, started in the describe's `before` hook and stopped in its
 * `after` hook. The answer stands for what `start` made from the `before` hook on, so the describe
 * names it at its top as a const; used earlier (while the describe is being declared), it throws.
 * node:test runs `after` hooks in the order they were declared, so what a describe names first is
 * also stopped first: a describe whose teardown must run in another order (processes killed before
 * their store is removed) writes its own `after` hook.
 *
 * ```ts
 * describe('…', () => {
 *   const receiver = useStarted('the receiver', startReceiver, (r) => r.close());
 *   it('…', () => assert.equal(receiver.received.length, 0));
 * });
 * ```
 */
export function useStarted<T extends object>(
  what: string,
  start: () => Promise<T>,
  stop: (started: T) => Promise<void>,
): T {
  let started: T | undefined;
  before(async () => {
    started = await start();
  });
  after(async () => {
    if (started) await stop(started);
  });
  return standIn(what, () => started);
}

/**
 * Reads and writes through to what `current` answers, once it answers something; the fields of
 * `known` are answered from the start.
 */
function standIn<T extends object>(what: string, current: () => T | undefined, known: Partial<T> = {}): T {
  const target = () => {
    const value = current();
    if (!value) throw new Error(`${what} is used before its describe's before hook started it`);
    return value;
  };
  return new Proxy({} as T, {
    get(_, key) {
      if (Object.hasOwn(known, key)) return Reflect.get(known, key);
      const value = target();
      const field: unknown = Reflect.get(value, key);
      return typeof field === 'function' ? field.bind(value) : field;
    },
    set: (_, key, field) => Reflect.set(target(), key, field),
    has: (_, key) => Object.hasOwn(known, key) || Reflect.has(target(), key),
    // A spread (`{ ...space }`) copies what the started value has.
    ownKeys: () => [...new Set([...Reflect.ownKeys(known), ...Reflect.ownKeys(target())])],
    getOwnPropertyDescriptor: (_, key) => {
      const found =
        Reflect.getOwnPropertyDescriptor(known, key) ?? Reflect.getOwnPropertyDescriptor(target(), key);
      return found && { ...found, configurable: true };
    },
  });
}

export interface UseServerOptions extends StartOptions {
  /** Starts a real SMTP server (`server.smtp`) and gives its URL to the server as SMTP_URL. */
  smtp?: boolean;
}

/** The server of a describe, and the SMTP server it mails to (with `smtp: true`). */
export interface ServerInUse extends TestServer {
  readonly smtp: TestSmtp;
}

/**
 * The real server of the enclosing describe (startServer: a real port, its own data directory and,
 * when TEST_DATABASE_URL is set, its own PostgreSQL schema), started in the describe's `before` hook
 * and closed in its `after` hook. `options` may be a function, called in the `before` hook, when they
 * name something started there first (a receiver's URL, a proxy's). `server.smtp` can be named at the
 * describe's top too (`const smtp = server.smtp`).
 *
 * ```ts
 * describe('sharing', () => {
 *   const server = useServer({ smtp: true, env: { PUBLIC_URL: 'https://sign.example.test' } });
 *   it('…', async () => {
 *     const owner = await aUser(server, { name: 'owner' });
 *     await server.smtp.waitFor('ann@example.org');
 *   });
 * });
 * ```
 */
export function useServer(options: UseServerOptions | (() => UseServerOptions) = {}): ServerInUse {
  let running: { server?: ServerInUse; smtp?: TestSmtp } | undefined;
  const smtp = standIn('the SMTP server of useServer({ smtp: true })', () => running?.smtp);
  before(async () => {
    const { smtp: withSmtp, ...start } = typeof options === 'function' ? options() : options;
    running = { smtp: withSmtp ? await startSmtp() : undefined };
    const env = { ...(running.smtp ? { SMTP_URL: running.smtp.url } : {}), ...start.env };
    running.server = { ...(await startServer({ ...start, env })), smtp };
  });
  after(async () => {
    await running?.server?.close();
    await running?.smtp?.close();
  });
  return standIn('the server of useServer()', () => running?.server, { smtp });
}

/**
 * A store of its own (makeStore: a data directory and, on PostgreSQL, a schema) for the servers the
 * enclosing describe runs itself (processes, the command line), removed in its `after` hook.
 */
export function useStore(name: string): TestStore {
  return useStarted(
    `the ${name} store`,
    () => makeStore(name),
    (store) => store.remove(),
  );
}
