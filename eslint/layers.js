// The floors of src/ and what each may import (ARCHITECTURE.md), as an ESLint rule: `layers/imports`.
// Relative specifiers are resolved against the importing file, so the rule judges the module a line
// names, whatever the depth of the path that names it.
import path from 'node:path';

/** Capabilities: each answers one part of the API. They share rules through core/, never directly. */
export const CAPABILITIES = [
  'agents',
  'audit',
  'auth',
  'contacts',
  'documents',
  'enums',
  'files',
  'search',
  'settings',
  'sharing',
  'signing',
  'stamps',
  'templates',
  'users',
  'webhooks',
];

/** Engines: know nothing of the API's rules. */
export const ENGINES = ['pdf', 'pki', 'store', 'jobs', 'notify', 'rate-limits'];

/** The composition: wires everything together, so it may import anything. */
export const COMPOSITION = ['http', 'mcp', 'ops', 'app', 'cli', 'main'];

/** The ground floor: leaves that import nothing of Signery's; every floor above may use them. */
export const BASE = 'base';

/**
 * Core's rooms from the bottom up (ARCHITECTURE.md): each may import only the rooms before it, by value
 * or by type. A file at core/'s top (deps.ts, metrics.ts, scroll.ts) is a room named after it.
 */
export const CORE = [
  'metrics', // the counters and histograms
  'examples', // the OpenAPI examples the contracts show
  'common-contract', // request words every capability uses: names, ids, paging, passwords
  'deps', // what every use case is given
  'access', // the actor, the recipient caller, roles: who may see or change what
  'audit', // the audit record and its hash chain
  'settings', // tenant settings and properties
  'scroll', // paging through long lists
  'paging-contract', // the request words of paging and scrolling
  'events', // the event outbox, its delivery jobs, who may hold a webhook
  'changes', // the compare-and-set change of a document, file claims
  'files', // storage quotas, stored PDFs, image bytes
  'documents', // custom fields, definitions, visual entries, erasure
  'identity', // sessions, secrets, OIDC, the user view
  'sharing', // the share workflow, the recipient, share fields
  'views', // the JSON views of documents, shares and files
  'stamps', // stamps and who may use them
  'signing', // visuals, the seal, signing in a call
];

/** Why one room of core/ may not import another (both places under src/core/), or undefined when it may. */
function coreRefusal(from, to) {
  const [, a] = from.module.split('/');
  const [, b] = to.module.split('/');
  if (a === b) return undefined;
  for (const room of [a, b])
    if (!CORE.includes(room))
      return `core/${room} has no place in core's order: add it to CORE in eslint/layers.js, above the rooms it imports`;
  if (CORE.indexOf(b) < CORE.indexOf(a)) return undefined;
  return (
    `core/${a} may not import core/${b} (${to.module}), which stands above it in core's order ` +
    `(CORE in eslint/layers.js, bottom to top: ${CORE.join(' < ')}): move what ${a} needs down, ` +
    `to core/${a} or a room below it, or move the importing code up to core/${b} or above`
  );
}

/** Where a module under src/ lives: its room (first folder, or the file at the top) and its path without extension. */
function place(srcDir, file) {
  const rel = path.relative(srcDir, file).split(path.sep).join('/');
  if (rel.startsWith('..')) return undefined;
  const module = rel.replace(/\.(ts|js|mts|mjs)$/, '');
  return { room: module.split('/')[0], module };
}

/** Why `from` may not import `to` (both places under src/), or undefined when it may. */
export function refusal(from, to, { typeOnly = false } = {}) {
  if (from.room === to.room) {
    if (from.room === 'core') return coreRefusal(from, to);
    // A migration is frozen history: it copies what it needs instead of running live code.
    const migration = (p) => p.module.startsWith('store/db/migrations/');
    if (migration(from) && !migration(to) && !typeOnly)
      return 'a migration imports no live code (copy what it needs; `import type` is allowed)';
    return undefined;
  }
  if (from.room === BASE) return `base/ is the ground floor: it imports nothing of Signery's (${to.room}/)`;
  if (to.room === BASE) return undefined;
  if (COMPOSITION.includes(from.room)) return undefined;
  if (COMPOSITION.includes(to.room)) return `${from.room}/ may not import the composition (${to.room})`;
  if (CAPABILITIES.includes(from.room)) {
    if (CAPABILITIES.includes(to.room))
      return `capability ${from.room}/ may not import its sibling ${to.room}/: move the shared rule to core/`;
    return undefined;
  }
  if (from.room === 'core') {
    if (CAPABILITIES.includes(to.room)) return `core/ may not import the capability ${to.room}/`;
    return undefined;
  }
  if (ENGINES.includes(from.room)) {
    if (CAPABILITIES.includes(to.room))
      return `the engine ${from.room}/ may not import the capability ${to.room}/`;
    if (to.room === 'core')
      return `the engine ${from.room}/ may not import core/ (${to.module}); what engines share is in base/`;
    if (
      (from.room === 'pdf' || from.room === 'pki') &&
      ['store', 'jobs', 'notify', 'rate-limits'].includes(to.room)
    )
      return `${from.room}/ works on bytes: it may not import ${to.room}/`;
    if (from.room === 'store' && !['pki', 'pdf', 'core'].includes(to.room))
      return `store/ may not import ${to.room}/, which stands above it`;
    return undefined;
  }
  return undefined;
}

/** @type {import('eslint').Rule.RuleModule} */
const imports = {
  meta: {
    type: 'problem',
    docs: { description: 'Each floor of src/ imports only the floors below it (ARCHITECTURE.md)' },
    schema: [],
  },
  create(context) {
    const filename = context.filename;
    const root = context.cwd;
    const srcDir = path.join(root, 'src');
    const inWeb = path.relative(path.join(root, 'web'), filename).startsWith('..') === false;
    const from = place(srcDir, filename);
    if (!from && !inWeb) return {};
    const check = (node, specifier, typeOnly) => {
      if (typeof specifier !== 'string' || !specifier.startsWith('.')) return;
      const target = path.resolve(path.dirname(filename), specifier);
      if (inWeb) {
        if (!path.relative(path.join(root, 'web'), target).startsWith('..')) return;
        context.report({ node, message: 'web/ is the signer page: it may not import server code' });
        return;
      }
      const to = place(srcDir, target);
      if (!to) return;
      const why = refusal(from, to, { typeOnly });
      if (why) context.report({ node, message: why });
    };
    return {
      ImportDeclaration: (node) => check(node.source, node.source.value, node.importKind === 'type'),
      ExportNamedDeclaration: (node) =>
        node.source && check(node.source, node.source.value, node.exportKind === 'type'),
      ExportAllDeclaration: (node) => check(node.source, node.source.value, node.exportKind === 'type'),
      ImportExpression: (node) =>
        node.source.type === 'Literal' && check(node.source, node.source.value, false),
    };
  },
};

export const layers = { rules: { imports } };
