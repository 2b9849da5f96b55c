/*
 * The audit chain's rules (tamper evidence: each record's hash covers its content and the hash of the
 * record before it in its tenant). Every stored hash was computed by them, the oldest by migration
 * 0008, so they are a persisted format defined once, frozen with that migration; live code takes them
 * from here.
 */
export {
  canonicalJson,
  chainedFieldsOf,
  chainHash,
  GENESIS,
  type ChainedFields,
} from '../../store/db/migrations/frozen/audit-chain.js';
