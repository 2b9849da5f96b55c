import { createUser, mustSucceed, USER_PASSWORD, type TestServer } from './server.js';

/** Scenario builders for people: users made by the administrator through the API, signed in. */

type NewUser = Record<string, unknown> & { name: string };

/** The people many scenarios cast: the owner of the documents, and two colleagues who sign them. */
export const OWNER = { name: 'owner', email: 'owner@example.test', displayName: 'Olivia Owner' };
export const IVY = { name: 'ivy', email: 'ivy@example.test', displayName: 'Ivy Signer' };
export const JON = { name: 'jon', email: 'jon@example.test', displayName: 'Jon Signer' };
/** Someone who signs documents of her own, with no e-mail address. */
export const ADA = { name: 'ada', displayName: 'Ada Lovelace' };

/** A user with nothing but a name and the address `<name>@example.test`. */
export function withMail(name: string): NewUser {
  return { name, email: `${name}@example.test` };
}

export interface AUser {
  id: string;
  name: string;
  /** A session of the user's (POST /login). */
  token: string;
  /** An API key of the user's (POST /api/key), with `apiKey: true`. */
  apiKey?: string;
}

/** A user the administrator makes (POST /users), signed in; with `apiKey: true`, with an API key too. */
export async function aUser(
  server: TestServer,
  user: NewUser,
  options: { apiKey?: boolean } = {},
): Promise<AUser> {
  const id = await createUser(server, user);
  const token = await server.login(user.name, (user.password as string | undefined) ?? USER_PASSWORD);
  if (!options.apiKey) return { id, name: user.name, token };
  const key = mustSucceed(await server.api('POST', '/api/key', { token, body: {} }), 'POST /api/key');
  return { id, name: user.name, token, apiKey: key.body.id as string };
}

/** OWNER, signed in (their session), and IVY and JON, who sign the owner's documents. */
export async function anOwnerAndTwoSigners(server: TestServer): Promise<string> {
  const owner = await aUser(server, OWNER);
  await someUsers(server, [IVY, JON]);
  return owner.token;
}

/** Users the administrator makes (POST /users), one after the other, not signed in: their ids. */
export async function someUsers(server: TestServer, users: NewUser[]): Promise<string[]> {
  const ids: string[] = [];
  for (const user of users) ids.push(await createUser(server, user));
  return ids;
}
