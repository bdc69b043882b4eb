/**
 * The enums the pages offer as choices, read from the document (the value arrays openapi-typescript
 * generates into schema.ts), so a value the service adds or drops shows up without a page edit.
 */
export {
  aiModelInstanceDtoModel_typeValues as MODEL_TYPES,
  aiModelInstanceDtoStatusValues as MODEL_STATUSES,
  audienceDtoSource_typeValues as AUDIENCE_SOURCE_TYPES,
  audienceDtoStatusValues as AUDIENCE_STATUSES,
  connectionDtoPlatformValues as CONNECTION_PLATFORMS,
  connectionDtoStatusValues as CONNECTION_STATUSES,
  consentDtoAd_user_dataValues as CONSENT_VALUES,
  signalDtoSignal_typeValues as SIGNAL_TYPES,
  signalDtoStatusValues as SIGNAL_STATUSES,
  syncRunDtoStatusValues as SYNC_STATUSES,
} from './schema';
