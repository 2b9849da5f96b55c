import { AppError } from '../../base/errors.js';

/**
 * The identity provider could not be used: unreachable, misconfigured, or it answered something that
 * does not follow the protocol. Not the caller's fault, so it answers 502 and is not counted as a
 * failed login. `cause` holds the underlying error for the operator's log; the message never does.
 */
export class IdentityProviderFailed extends AppError {
  override name = 'IdentityProviderFailed';
  readonly statusCode = 502;
  readonly code = 'IDENTITY_PROVIDER_ERROR';
}
