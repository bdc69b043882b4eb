/** Injection token of the process-wide CredentialCache. */
export const CREDENTIAL_CACHE = Symbol('CREDENTIAL_CACHE');
