import type { FieldErrors } from '../common/errors/api-error.js';
import { MESSAGES } from '../common/validation/fields.js';
import type { Platform } from '../connections/connection.entity.js';

/**
 * `signal.config`: the destination settings of the connection's platform (SPEC 10.4).
 * - Google (Data Manager API `events:ingest`): `conversion_action_id`, the Google Ads conversion
 *   action the events count for (the request's `productDestinationId`), an int64 written as digits.
 * - Meta (Conversions API `POST /{pixel_id}/events`): `pixel_id` (digits), `event_name` (a standard
 *   event such as `Purchase`, or a custom one), `action_source` (Meta's list), and optionally
 *   `test_event_code`, which routes the events to Events Manager's Test Events instead of the ads.
 * Checked when a connection is set; a missing required key only when the signal is to be active.
 */

export const META_ACTION_SOURCES = [
  'website',
  'app',
  'phone_call',
  'chat',
  'email',
  'physical_store',
  'system_generated',
  'business_messaging',
  'other',
] as const;

interface ConfigKey {
  required: boolean;
  check: (value: unknown) => string | undefined;
}

const text =
  (pattern: RegExp, message: string) =>
  (value: unknown): string | undefined => {
    if (typeof value !== 'string') return MESSAGES.notString;
    return pattern.test(value) ? undefined : message;
  };

const KEYS: Record<Platform, Record<string, ConfigKey>> = {
  google_ads: {
    conversion_action_id: { required: true, check: text(/^\d{1,20}$/, 'A Google Ads conversion action id: 1 to 20 digits.') },
  },
  meta_ads: {
    pixel_id: { required: true, check: text(/^\d{1,30}$/, 'A Meta pixel (dataset) id: 1 to 30 digits.') },
    event_name: {
      required: true,
      check: text(/^[A-Za-z0-9_ -]{1,100}$/, 'An event name: 1 to 100 letters, digits, spaces, `_` or `-` (e.g. "Purchase").'),
    },
    action_source: {
      required: true,
      check: (value) =>
        typeof value === 'string' && (META_ACTION_SOURCES as readonly string[]).includes(value)
          ? undefined
          : MESSAGES.choice(value, META_ACTION_SOURCES),
    },
    test_event_code: { required: false, check: text(/^[A-Za-z0-9_-]{1,64}$/, 'A test event code: 1 to 64 letters, digits, `_` or `-`.') },
  },
};

/** Errors of `config` for the platform, under `config.<key>`; required keys only when `activating`. */
export function signalConfigErrors(platform: Platform, config: Record<string, unknown>, activating: boolean): FieldErrors {
  const keys = KEYS[platform];
  const errors: FieldErrors = {};
  for (const [key, value] of Object.entries(config)) {
    const rule = keys[key];
    if (rule === undefined) {
      errors[`config.${key.slice(0, 64)}`] = [`Unknown setting for a ${platform} signal; expected ${Object.keys(keys).join(', ')}.`];
      continue;
    }
    const problem = rule.check(value);
    if (problem) errors[`config.${key}`] = [problem];
  }
  if (activating)
    for (const [key, rule] of Object.entries(keys)) if (rule.required && !(key in config)) errors[`config.${key}`] = [MESSAGES.required];
  return errors;
}

/** The settings of a complete Google config. */
export interface GoogleSignalConfig {
  conversionActionId: string;
}

/** The settings of a complete Meta config. */
export interface MetaSignalConfig {
  pixelId: string;
  eventName: string;
  actionSource: string;
  testEventCode: string | null;
}

/** The config read for delivery, or undefined when it is not complete for the platform. */
export function googleSignalConfig(config: Record<string, unknown>): GoogleSignalConfig | undefined {
  if (Object.keys(signalConfigErrors('google_ads', config, true)).length > 0) return undefined;
  return { conversionActionId: config.conversion_action_id as string };
}

export function metaSignalConfig(config: Record<string, unknown>): MetaSignalConfig | undefined {
  if (Object.keys(signalConfigErrors('meta_ads', config, true)).length > 0) return undefined;
  return {
    pixelId: config.pixel_id as string,
    eventName: config.event_name as string,
    actionSource: config.action_source as string,
    testEventCode: typeof config.test_event_code === 'string' ? config.test_event_code : null,
  };
}
