/**
 * Every failure a developer can hit while starting the local Postgres is a LocalPostgresError
 * with a stable `code` and one message line that names the problem and what to do next.
 */
export type LocalPostgresErrorCode =
  | 'BAD_OPTION'
  | 'UNSUPPORTED_PLATFORM'
  | 'FETCH_FAILED'
  | 'DIGEST_MISMATCH'
  | 'UNPACK_FAILED'
  | 'NO_USER'
  | 'PORT_IN_USE'
  | 'WRONG_MAJOR'
  | 'INITDB_FAILED'
  | 'EXITED_DURING_START'
  | 'START_TIMEOUT';

export class LocalPostgresError extends Error {
  readonly code: LocalPostgresErrorCode;

  constructor(code: LocalPostgresErrorCode, message: string) {
    super(message);
    this.name = 'LocalPostgresError';
    this.code = code;
  }
}
