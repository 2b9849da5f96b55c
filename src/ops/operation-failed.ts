/**
 * An operation of the `signery` command that refused to start (it would have done harm) or whose
 * check failed: its message says what was found and what to do, and is all the person running it
 * needs (the command prints it without a stack and exits 1). Messages never hold a password.
 */
export class OperationFailed extends Error {
  override name = 'OperationFailed';
}

/** A command line that names no valid operation: the command prints its message and the usage, and exits 2. */
export class InvalidArguments extends OperationFailed {
  override name = 'InvalidArguments';
}
