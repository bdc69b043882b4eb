/**
 * Drops an answer's unread body, so its connection can be reused or closed. A body whose
 * connection already broke (the other side closed it, "terminated") has nothing left to drop:
 * cancelling an errored stream rejects with that error, which is not news to whoever discards it.
 */
export async function discardBody(response: Response): Promise<void> {
  if (!response.body || response.bodyUsed || response.body.locked) return;
  await response.body.cancel().catch(() => undefined);
}
