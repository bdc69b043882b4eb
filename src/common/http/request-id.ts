/**
 * The request ids the service accepts from `X-Request-Id` (else it makes a UUID, which fits too):
 * short, and of characters that cannot break a log line or a header. The API document states it
 * as the pattern of the header and of every error body's `request_id`.
 */
export const REQUEST_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';
