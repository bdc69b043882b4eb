/**
 * Names for the service's objects as the web interface reads them. Every type here is an alias of
 * web/src/api/schema.ts, generated from openapi.json (`npm run web:types`), so a contract change
 * reaches the pages through the type checker instead of a hand-kept copy.
 */
import type { components, operations } from './schema';

type Schemas = components['schemas'];

/** One page of a list: the envelope every list operation answers, around rows of `T`. */
export type Page<T> = Omit<operations['audiences_list']['responses'][200]['content']['application/json'], 'results'> & { results: T[] };

export type CurrentUser = Schemas['CurrentUserDto'];
export type Role = CurrentUser['role'];
export type Audience = Schemas['AudienceDto'];
/** An audience as its own page reads it: with its destinations' sync state (SPEC 10.3). */
export type AudienceDetail = Schemas['AudienceDetailDto'];
export type AudienceDestination = Schemas['AudienceDestinationDto'];
/** One sync of an audience to one destination, with its counts (SPEC 10.3). */
export type SyncRun = Schemas['SyncRunDto'];
export type SyncRuns = Schemas['SyncRunsDto'];
export type Signal = Schemas['SignalDto'];
export type SignalEvent = Schemas['SignalEventDto'];
/** A person as the API shows one: which kinds of key they have, never an identifier. */
export type Person = Schemas['PersonDto'];
export type Consent = Schemas['ConsentDto'];
export type ModelInstance = Schemas['AiModelInstanceDto'];
export type Connection = Schemas['ConnectionDto'];
export type McpToken = Schemas['McpTokenDto'];
/** A token as its creation answers it: the only time the secret is shown. */
export type CreatedMcpToken = Schemas['CreatedMcpTokenDto'];
export type WebConfig = Schemas['WebConfigDto'];
/** An endpoint that hears of background events (SPEC 10.5), never with its secret. */
export type Webhook = Schemas['WebhookDto'];
/** A webhook as its creation answers it: the only time its secret is shown (and after a rotation, `WebhookSecret`). */
export type CreatedWebhook = Schemas['CreatedWebhookDto'];
export type WebhookSecret = Schemas['WebhookSecretDto'];
export type WebhookDelivery = Schemas['WebhookDeliveryDto'];
/** A file import and its progress: counts, rejects by reason, and a sample of the rejected lines. */
export type Import = Schemas['ImportDto'];
export type ImportRowError = Schemas['ImportRowErrorDto'];
