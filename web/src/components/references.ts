import { platformLabel } from '../api/platforms';
import { SIGNAL_STATUS_NAMES } from '../api/status-transitions';
import type { Audience, Connection, ModelInstance, Signal } from '../api/types';

/**
 * A kind of object that another one refers to (a signal's audience, an audience's model): where the
 * API lists it (with `search`, `page_size` and `ordering=name`, SPEC section 4) and the app shows
 * it, and how one is named in a picker.
 */
export interface ReferenceSource<T extends { id: number }> {
  apiPath: string;
  /** The app's list of them, which takes the API's filters in its address. */
  appPath: string;
  /** The app's page of one, where there is one (connections have only their list). */
  pageOf?: (id: number) => string;
  /** One of them in words ("audience"), and several ("audiences"). */
  noun: string;
  plural: string;
  labelOf: (row: T) => string;
  /** A second line in the picker's list, where names alone may not tell two apart. */
  detailOf?: (row: T) => string;
}

/** Any source, as a list of filters or blockers holds them (a function of a row is callable with none). */
export type AnyReferenceSource = ReferenceSource<never>;

export const AUDIENCES: ReferenceSource<Audience> = {
  apiPath: '/api/v1/audiences/',
  appPath: '/app/audiences',
  pageOf: (id) => `/app/audiences/${id}`,
  noun: 'audience',
  plural: 'audiences',
  labelOf: (row) => row.name,
  detailOf: (row) => `${row.source_type}, ${row.status}`,
};

export const SIGNALS: ReferenceSource<Signal> = {
  apiPath: '/api/v1/signals/',
  appPath: '/app/signals',
  pageOf: (id) => `/app/signals/${id}`,
  noun: 'signal',
  plural: 'signals',
  labelOf: (row) => row.name,
  detailOf: (row) => `${row.signal_type}, ${SIGNAL_STATUS_NAMES[row.status] ?? row.status}`,
};

export const MODELS: ReferenceSource<ModelInstance> = {
  apiPath: '/api/v1/ai-model-instances/',
  appPath: '/app/models',
  pageOf: (id) => `/app/models/${id}`,
  noun: 'model',
  plural: 'models',
  labelOf: (row) => row.name,
  detailOf: (row) => `${row.model_type.replace(/_/g, ' ')}, ${row.status}`,
};

/** Connections have no name: the account's, which the SPEC's `search` and `ordering=name` read too. */
export const CONNECTIONS: ReferenceSource<Connection> = {
  apiPath: '/api/v1/connections/',
  appPath: '/app/connections',
  noun: 'connection',
  plural: 'connections',
  labelOf: (row) => row.account_name,
  detailOf: (row) => `${platformLabel(row.platform)} ${row.external_account_id}, ${row.status}`,
};
