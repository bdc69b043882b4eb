// Generated from openapi.json by `npm run web:types` (scripts/web-types.mjs). Do not edit: regenerate.

export interface paths {
  '/api/v1/users/me/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The current user
     * @description The user of the JWT. An API key is not a user: 403.
     */
    get: operations['users_me'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/jwt/create/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Log in
     * @description Exchanges an email and password for an access and a refresh token. Wrong email, wrong password and an inactive user all answer the same 401 `authentication_failed`. Failed attempts are limited per email and per client IP (429 `throttled` with `Retry-After`).
     */
    post: operations['jwt_create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/jwt/refresh/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Refresh the token pair
     * @description Spends a refresh token and returns a new access and refresh token (rotation). Presenting a refresh token that was already spent ends its whole session: every token of that login stops working (reuse detection).
     */
    post: operations['jwt_refresh'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/jwt/verify/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Verify a token
     * @description Answers 200 `{}` when the access or refresh token is valid now (signature, expiry, session not ended), else 401 `token_not_valid`.
     */
    post: operations['jwt_verify'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/jwt/logout/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Log out
     * @description Ends the session of the access token in the Authorization header: its refresh token and that access token stop working.
     */
    post: operations['jwt_logout'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/o/{provider}/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Start a social login
     * @description Returns the URL to send the browser to. The state in it is single use, valid for 10 minutes and bound to the provider, the redirect URI, a PKCE verifier and (Google) a nonce, all kept server-side: no cookie is needed. Sent with `Authorization: Bearer <access>`, the flow links the provider account to that user instead of signing in, and only a POST with that user’s token can finish it.
     */
    get: operations['social_login_start'];
    put?: never;
    /**
     * Finish a social login, or link a provider account
     * @description Takes the `code` and `state` of the provider’s callback from a JSON body, a form body or the query string and answers with tokens of an ordinary session. The identity maps to an existing active user: by an earlier link, else (Google, or Facebook with FACEBOOK_TRUST_EMAIL) by verified email, linked on first use; nobody is created. With `Authorization: Bearer <access>` the provider account is linked to that user instead. Failed attempts count per client IP like password logins.
     */
    post: operations['social_login_finish'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/audiences/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List audiences
     * @description Audiences of your workspace, newest first by default.
     */
    get: operations['audiences_list'];
    put?: never;
    /**
     * Create an audience
     * @description A new audience in your workspace, status `draft`. `model_instance` is required when `source_type` is `model`; references must be objects of your workspace. Names are unique per workspace, ignoring case.
     */
    post: operations['audiences_create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/audiences/{id}/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Get an audience
     * @description One audience of your workspace; another workspace’s id answers 404 like one that does not exist.
     */
    get: operations['audiences_retrieve'];
    put?: never;
    post?: never;
    /**
     * Delete an audience
     * @description Refused with 409 while a signal uses the audience.
     */
    delete: operations['audiences_destroy'];
    options?: never;
    head?: never;
    /**
     * Update an audience
     * @description Changes the fields given. An archived audience cannot change: a PATCH that would change it is a 400, one that changes nothing a 200.
     */
    patch: operations['audiences_partial_update'];
    trace?: never;
  };
  '/api/v1/signals/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List signals
     * @description Signals of your workspace, newest first by default.
     */
    get: operations['signals_list'];
    put?: never;
    /**
     * Create a signal
     * @description A new signal is a draft (status 0) unless `status` says otherwise. Creating counts as the transition from 0: status 1 (active) needs `connection` to be an active connection of your workspace, 4 (archived) is allowed, 2 (paused) and 3 (failed) are refused with a 400 under `status`.
     */
    post: operations['signals_create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/signals/{id}/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Get a signal
     * @description One signal of your workspace; another workspace’s id answers 404 like one that does not exist.
     */
    get: operations['signals_retrieve'];
    put?: never;
    post?: never;
    /**
     * Delete a signal
     * @description Removes the signal for good (archive it instead to keep its history). 204, no body.
     */
    delete: operations['signals_destroy'];
    options?: never;
    head?: never;
    /**
     * Update a signal
     * @description Changes the fields given. Status transitions: 0→1, 1→2, 2→1, 3→1, any but 4 → 4; setting the current status is a no-op. Activating (→1) needs the resulting `connection` to be an active connection of your workspace, and an active signal cannot be left without one. Refused transitions are a 400 under `status`. An archived signal (4) cannot change: a PATCH that would change it is a 400, one that changes nothing a 200.
     */
    patch: operations['signals_partial_update'];
    trace?: never;
  };
  '/api/v1/ai-model-instances/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List AI model instances
     * @description AI model instances of your workspace, newest first by default.
     */
    get: operations['ai_model_instances_list'];
    put?: never;
    /**
     * Create an AI model instance
     * @description Starts `pending` unless `status` names one reachable from it: `training` (version 1) or `archived`.
     */
    post: operations['ai_model_instances_create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/ai-model-instances/{id}/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Get an AI model instance
     * @description One model instance of your workspace, with its `metrics` and training `version`; another workspace’s id answers 404.
     */
    get: operations['ai_model_instances_retrieve'];
    put?: never;
    post?: never;
    /**
     * Delete an AI model instance
     * @description Refused with 409 while an audience or a signal uses the instance.
     */
    delete: operations['ai_model_instances_destroy'];
    options?: never;
    head?: never;
    /**
     * Update an AI model instance
     * @description Changes the fields given; the training pipeline reports `status` and `metrics` this way. Status moves follow the rules of the `status` field. An archived instance cannot change: a PATCH that would change it is a 400, one that changes nothing a 200.
     */
    patch: operations['ai_model_instances_partial_update'];
    trace?: never;
  };
  '/api/v1/connections/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List connections
     * @description Authorised links to Google Ads and Meta Ads accounts of your workspace, newest first by default. Connections cannot be created through this API (`POST` answers 405 `method_not_allowed` with `Allow: GET, HEAD`): an admin or editor creates them with the OAuth flow of the web interface (`POST /oauth/connections/{google-ads|meta-ads}/start`), and an operator can register an externally managed one with `audience-admin connection create`. OAuth tokens are encrypted at rest and never returned. `ordering=name` sorts by `account_name`.
     */
    get: operations['connections_list'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/connections/{id}/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Get a connection
     * @description One ad-account connection of your workspace: status, `status_reason`, scopes and token times; never a token.
     */
    get: operations['connections_retrieve'];
    put?: never;
    post?: never;
    /**
     * Delete a connection
     * @description Revokes the grant at the ad platform (best effort: a provider that fails or does not answer in time does not block the deletion), then removes the connection: signals that used it lose it and the active ones are paused, and audiences stop sending to it.
     */
    delete: operations['connections_destroy'];
    options?: never;
    head?: never;
    /**
     * Update a connection
     * @description Renames it (`account_name`) and, on a Google connection, records whether your organisation accepts Google's Customer Match terms (`customer_match_terms_accepted`, admins only: an editor or an API key changing it → 403 `permission_denied`; `true` on a Meta connection → 400). A value sent unchanged is accepted from anyone who may write. The other fields are set by the OAuth flow and ignored in the body.
     */
    patch: operations['connections_partial_update'];
    trace?: never;
  };
  '/oauth/connections/{platform}/start': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Start connecting ad accounts
     * @description For an admin or editor signed in with a JWT (a viewer or an API key → 403). Answers the provider’s authorization URL; after consent the provider sends the browser to the callback, which creates or refreshes one connection per account the grant reaches, in your workspace. The state is single use and valid for 10 minutes.
     */
    post: operations['connection_flow_start'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/oauth/connections/{platform}/callback': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * OAuth callback of a connection flow
     * @description Where Google or Meta sends the browser back. No credential: the state names the user, workspace and platform. Always answers 302 to the web interface page the flow started from, with `platform` and either `connected=N` (connections created or refreshed) or `error=` one of `access_denied`, `invalid_state`, `expired_state`, `browser_mismatch` (the callback came back in another browser than the one that started the flow), `missing_code`, `invalid_code`, `scope_missing`, `no_accounts`, `permission_denied`, `provider_unavailable`, `provider_error`, `invalid_grant`, `temporarily_unavailable`, `server_error`.
     */
    get: operations['connection_flow_callback'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/people/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List people
     * @description People of your workspace, newest first by default. Identifiers are never returned, only which kinds of key a person has.
     */
    get: operations['people_list'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/people/batch/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Upsert people in a batch
     * @description Up to 1,000 people, upserted by `external_id` in one transaction. Identifiers are normalised and hashed on arrival; the raw values are never stored. Rows with errors are returned in `rejected` with their index and error codes; the other rows are applied. More than 1,000 rows is a 400.
     */
    post: operations['people_batch'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/people/{id}/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Get a person
     * @description One person of your workspace; another workspace’s id answers 404 like one that does not exist.
     */
    get: operations['people_retrieve'];
    put?: never;
    post?: never;
    /**
     * Erase a person
     * @description Erasure: the person and every hash of them are deleted at once. The next sync to each destination removes them there; after that nothing of them is left.
     */
    delete: operations['people_destroy'];
    options?: never;
    head?: never;
    /**
     * Update a person
     * @description Changes what the body names: traits are merged (`null` removes a key), consent per key, and the identifiers named replace the stored ones of their kind. A bad field is a 400 with the same error codes a batch row gets, under the field path.
     */
    patch: operations['people_partial_update'];
    trace?: never;
  };
  '/api/v1/imports/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List imports
     * @description Imports of your workspace, newest first by default.
     */
    get: operations['imports_list'];
    put?: never;
    /**
     * Import a file of people
     * @description A CSV (header row: `external_id`, identifier names, `consent_ad_user_data`, `consent_ad_personalization`; every other column is a trait, a string unless its header declares `:number` or `:boolean`, e.g. `ltv:number`) or NDJSON (one person object per line, as in a people batch) of any size up to IMPORT_MAX_BYTES (default 1 GiB). The file is streamed: each row is normalised and hashed as it arrives, and only hashes and the columns kept in clear are stored. The answer comes once the whole file is staged: 202 with the import, `queued`; poll it until `succeeded` (every accepted row applied) or `failed` (nothing applied). A file that is neither CSV nor NDJSON, or has no usable column, gives an import that is `failed` at once, with the reason in `errors_sample`. `target=audience` (with `audience` and `mode`) is read but answered 400 under `target`: audience imports come with audience membership. No `Idempotency-Key`: the body is streamed, not kept; importing a file twice upserts the same people twice, with the same result.
     */
    post: operations['imports_create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/imports/{id}/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Get an import
     * @description One import of your workspace, with its counts and rejected rows.
     */
    get: operations['imports_retrieve'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/audiences/{id}/members/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List an audience’s members
     * @description The members as people, as of the audience’s `members_updated_at` (SPEC 10.2). Rules and model audiences are recomputed by jobs after their inputs change; upload audiences change with each upload.
     */
    get: operations['audience_members_list'];
    put?: never;
    /**
     * Add or remove members of an upload audience
     * @description `add` upserts the rows as people (as `POST /api/v1/people/batch/` does) and makes them members; `remove` takes the people the rows name out. Rows with errors come back in `rejected`; the others are applied in one transaction. A rules or model audience computes its members: 409. An archived audience is frozen: 409.
     */
    post: operations['audience_members_change'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/ai-model-instances/{id}/scores/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Write model scores
     * @description Up to 10,000 scores (0–1) by external_id, for the model instance’s current `version`: each replaces the person’s previous score from this model. Model audiences of the instance are recomputed afterwards (debounced). For the training pipeline, with an API key of write scope. An archived instance: 409.
     */
    post: operations['model_scores_write'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/syncs/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List sync runs
     * @description Runs of your workspace’s audience syncs, newest first by default.
     */
    get: operations['syncs_list'];
    put?: never;
    /**
     * Sync an audience now
     * @description Starts a run per destination of an active audience (or for the one `connection` names). A destination with a real run already queued or running gets that run back instead of a second one (still 201). A dry run is a run of its own: it counts `planned_add`, `planned_remove` and the skips, sends nothing and ends `succeeded`. An audience that is not active, or a connection that is not one of its destinations: 400.
     */
    post: operations['syncs_start'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/syncs/{id}/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Get a sync run
     * @description One run with its counts, skips by reason and error.
     */
    get: operations['syncs_retrieve'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/syncs/{id}/cancel/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Cancel a queued sync run
     * @description A queued run turns `cancelled`; a run that has started or ended: 409.
     */
    post: operations['syncs_cancel'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/signals/{id}/events/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List events of a signal
     * @description The signal’s events of the last 30 days with their delivery state, newest first by default; never their identifiers.
     */
    get: operations['signal_events_list'];
    put?: never;
    /**
     * Send events of a signal
     * @description Up to 1,000 conversions or values for the signal’s destination (SPEC 10.4). Each event is checked on its own against the platform of the signal’s connection; identifiers are normalised and hashed on arrival and never stored in clear. A repeated `event_id` (within 30 days, also across concurrent requests) is counted in `duplicates`. Accepted events are delivered in the background; an active signal sends them at once, a paused or failed one holds them until it is active again (at most 7 days). A draft or archived signal: 409.
     */
    post: operations['signal_events_accept'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/webhooks/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List webhooks
     * @description The endpoints of your workspace that receive events, newest first by default; never their secrets. Anyone in the workspace may read them; only admins and write-scope API keys manage them.
     */
    get: operations['webhooks_list'];
    put?: never;
    /**
     * Create a webhook
     * @description Registers an endpoint for the events it lists. Deliveries are POSTs of `{"type", "timestamp", "data"}` signed as Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`; docs/webhooks.md), retried with backoff for 24 hours. The signing `secret` is in this response only. In production the URL must be https and resolve only to public addresses (a refused URL is a 400 under `url`).
     */
    post: operations['webhooks_create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/webhooks/{id}/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Get a webhook
     * @description One endpoint of your workspace, without its secret.
     */
    get: operations['webhooks_retrieve'];
    put?: never;
    post?: never;
    /**
     * Delete a webhook
     * @description Removes the endpoint and its deliveries; nothing more is sent to it. 204, no body.
     */
    delete: operations['webhooks_destroy'];
    options?: never;
    head?: never;
    /**
     * Update a webhook
     * @description Changes `url`, `events`, `description` or `enabled`. `enabled: false` stops deliveries (`disabled_reason` `disabled_by_user`); `enabled: true` turns an endpoint on again, also one the service disabled after 24 hours of failures. A new URL is checked as on create.
     */
    patch: operations['webhooks_partial_update'];
    trace?: never;
  };
  '/api/v1/webhooks/{id}/rotate-secret/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Rotate a webhook's secret
     * @description Makes a new signing secret, shown in this response only. For 24 hours deliveries carry two signatures in `webhook-signature` (space-separated: the new secret first, then the previous one), so receivers can switch without missing an event; then only the new one signs. Rotating again within the 24 hours drops the oldest secret at once.
     */
    post: operations['webhooks_rotate_secret'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/webhooks/{id}/test/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Send a test event
     * @description Queues a `webhook.test` event to this endpoint alone, enabled or not, signed like every delivery; its `data` is the webhook as `GET` shows it. It is tried once (no retries) and never counts towards disabling the endpoint. The answer is the delivery, `pending`; its outcome appears in the deliveries list moments later.
     */
    post: operations['webhooks_send_test'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/webhooks/{id}/deliveries/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List a webhook's deliveries
     * @description What was sent to this endpoint, newest first by default: one item per event, with its attempts so far (`attempt`), the last attempt's `response_status`, `duration_ms` and `error`, and while `pending` when the next attempt runs.
     */
    get: operations['webhooks_list_deliveries'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/app/session/config': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * What the web interface can offer
     * @description The configured social-login providers and ad platforms.
     */
    get: operations['web_session_configuration'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/app/session/login': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Sign in to the web interface
     * @description As `POST /api/v1/jwt/create/` (same throttling, same 401 for every failure), but the refresh token is set as the session cookie.
     */
    post: operations['web_session_sign_in'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/app/session/refresh': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Renew the access token
     * @description Spends the refresh token in the session cookie and sets its successor (rotation with reuse detection, as `/api/v1/jwt/refresh/`).
     */
    post: operations['web_session_refresh'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/app/session/logout': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Sign out of the web interface
     * @description Ends the session of the cookie’s refresh token (its access tokens stop working too) and clears the cookie. Without a valid cookie it only clears it.
     */
    post: operations['web_session_logout'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/app/session/social/{provider}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Finish a social sign-in in the web interface
     * @description As `POST /api/v1/auth/o/{provider}/` with a JSON body (the same checks, throttling and linking with `Authorization: Bearer`), but the new session’s refresh token is set as the session cookie.
     */
    post: operations['web_session_social_sign_in'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/mcp-tokens/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List my MCP tokens
     * @description Your own tokens that are not revoked (expired ones included), never their secrets.
     */
    get: operations['mcp_tokens_list'];
    put?: never;
    /**
     * Create an MCP token
     * @description Creates a personal token for AI agents on /mcp. It acts as you (your workspace, your role). Lifetime 90 days by default, 1 to 365. The secret is in this response only.
     */
    post: operations['mcp_tokens_create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/mcp-tokens/{id}/': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /**
     * Revoke an MCP token
     * @description The token stops working at once. Another user’s token answers 404.
     */
    delete: operations['mcp_tokens_destroy'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}
export type webhooks = Record<string, never>;
export interface components {
  schemas: {
    CurrentUserDto: {
      /**
       * Format: int64
       * @example 7
       */
      id: number;
      /**
       * Format: email
       * @example ana@acme.example
       */
      email: string;
      /**
       * Format: int64
       * @description The workspace (customer) id.
       * @example 1
       */
      customer: number;
      /**
       * @description `viewer` reads only; `admin` and `editor` also write.
       * @example editor
       * @enum {string}
       */
      role: 'admin' | 'editor' | 'viewer';
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      date_joined: string;
    };
    TokenObtainDto: {
      /**
       * Format: email
       * @example ana@acme.example
       */
      email: string;
      /**
       * Format: password
       * @example correct horse battery staple
       */
      password: string;
    };
    TokenPairDto: {
      /**
       * @description Access token (JWT, HS256), for `Authorization: Bearer …`. Lives 15 minutes by default.
       * @example eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3IiwidHlwZSI6ImFjY2VzcyJ9.c2lnbmF0dXJl
       */
      access: string;
      /**
       * @description Refresh token (JWT). Single use: /jwt/refresh/ spends it and returns a new pair. Lives 7 days by default.
       * @example eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3IiwidHlwZSI6InJlZnJlc2gifQ.c2lnbmF0dXJl
       */
      refresh: string;
    };
    TokenRefreshDto: {
      /**
       * @description A refresh token from /jwt/create/ or the last /jwt/refresh/.
       * @example eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3IiwidHlwZSI6InJlZnJlc2gifQ.c2lnbmF0dXJl
       */
      refresh: string;
    };
    TokenVerifyDto: {
      /**
       * @description An access or refresh token.
       * @example eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3IiwidHlwZSI6ImFjY2VzcyJ9.c2lnbmF0dXJl
       */
      token: string;
    };
    EmptyDto: Record<string, never>;
    AuthorizationUrlDto: {
      /**
       * Format: uri
       * @description Send the browser here. It comes back to `redirect_uri` with `code` and `state` (and, from Google, `iss`).
       * @example https://accounts.google.com/o/oauth2/v2/auth?client_id=1234.apps.googleusercontent.com&response_type=code&scope=openid%20email&state=q3Hk0vVQ2l9zR4sE2n3t8pX1yB6cD0fA5gH7jK9mL2o&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256&nonce=n-0S6_WzA2Mj
       */
      authorization_url: string;
    };
    SocialLoginDto: {
      /**
       * @description The `code` from the callback. Required unless the callback brought an `error`.
       * @example 4/0AVMBsJi…
       */
      code?: string;
      /**
       * @description The `state` from the callback (required): single use, valid for 10 minutes.
       * @example q3Hk0vVQ2l9zR4sE2n3t8pX1yB6cD0fA5gH7jK9mL2o
       */
      state?: string;
      /**
       * Format: uri
       * @description Google's `iss` from the callback (RFC 9207), passed on as received; when present it must be Google's issuer.
       * @example https://accounts.google.com
       */
      iss?: string;
      /**
       * Format: uri
       * @description Optional: the redirect URI of the GET; when sent it must be the one the state was issued for.
       * @example https://app.example.com/auth/callback/google
       */
      redirect_uri?: string;
      /**
       * @description The callback's `error` (consent denied): spends the state and answers 400 with the provider's reason.
       * @example access_denied
       */
      error?: string;
      /**
       * @description The callback's `error_description`, if any.
       * @example The user denied access.
       */
      error_description?: string;
    };
    SocialLoginUserDto: {
      /**
       * Format: int64
       * @example 42
       */
      id: number;
      /**
       * Format: email
       * @example ana@acme.example
       */
      email: string;
    };
    SocialLoginResultDto: {
      /**
       * @description Access token (JWT, HS256), for `Authorization: Bearer …`. Lives 15 minutes by default.
       * @example eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3IiwidHlwZSI6ImFjY2VzcyJ9.c2lnbmF0dXJl
       */
      access: string;
      /**
       * @description Refresh token (JWT). Single use: /jwt/refresh/ spends it and returns a new pair. Lives 7 days by default.
       * @example eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3IiwidHlwZSI6InJlZnJlc2gifQ.c2lnbmF0dXJl
       */
      refresh: string;
      /** @description The user signed in (or linked). */
      user: components['schemas']['SocialLoginUserDto'];
    };
    AudienceDto: {
      /**
       * Format: int64
       * @example 41
       */
      readonly id: number;
      /**
       * Format: int64
       * @description Your workspace (customer) id.
       * @example 1
       */
      readonly customer: number;
      /** @example High-value churn risks */
      name: string;
      /** @example Customers with a churn score above 0.8. */
      description: string;
      /**
       * @example model
       * @enum {string}
       */
      source_type: 'rules' | 'model' | 'upload';
      /**
       * @example {
       *       "all": [
       *         {
       *           "trait": "plan",
       *           "op": "eq",
       *           "value": "pro"
       *         },
       *         {
       *           "trait": "ltv",
       *           "op": "gte",
       *           "value": 100
       *         },
       *         {
       *           "consent": "ad_personalization",
       *           "op": "eq",
       *           "value": "granted"
       *         }
       *       ]
       *     }
       */
      rules: {
        [key: string]: unknown;
      };
      /**
       * Format: int64
       * @example 12
       */
      model_instance: number | null;
      /** @example 0.8 */
      min_score: number | null;
      /**
       * @example [
       *       3
       *     ]
       */
      connections: number[];
      /**
       * @example draft
       * @enum {string}
       */
      status: 'draft' | 'active' | 'archived';
      /**
       * Format: int32
       * @description The exact member count as of `members_updated_at`; null before the first computation (SPEC 10.2).
       * @example 15230
       */
      readonly size: number | null;
      /**
       * Format: date-time
       * @description When the members were last computed; null before the first computation.
       * @example 2026-11-21T10:05:00.000Z
       */
      readonly members_updated_at: string | null;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly created_at: string;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly updated_at: string;
    };
    CreateAudienceDto: {
      /**
       * @description Trimmed; unique in the workspace ignoring letter case.
       * @example High-value churn risks
       */
      name: string;
      /**
       * @description Default: `""`.
       * @example Customers with a churn score above 0.8.
       */
      description?: string;
      /**
       * @description Where members come from: rules, a model, or an upload.
       * @example model
       * @enum {string}
       */
      source_type: 'rules' | 'model' | 'upload';
      /**
       * @description Who a rules audience selects (SPEC 10.2): `{"all": [...]}`, `{"any": [...]}`, `{"not": {...}}`, a trait condition `{"trait", "op", "value"}` (ops eq, neq, gt, gte, lt, lte, in, not_in (≤ 1,000 values), contains, exists, not_exists) or a consent condition `{"consent": "ad_user_data" | "ad_personalization", "op": eq | neq | in | not_in, "value"}`. `{}` selects nobody. Comparisons are typed: a number matches numbers only; a missing trait matches only `not_exists`. Errors come under `rules.<path>`, e.g. `rules.all.2.op`. At most 64 KiB as JSON, nested at most 10 levels. Default: `{}`.
       * @example {
       *       "all": [
       *         {
       *           "trait": "plan",
       *           "op": "eq",
       *           "value": "pro"
       *         },
       *         {
       *           "trait": "ltv",
       *           "op": "gte",
       *           "value": 100
       *         },
       *         {
       *           "consent": "ad_personalization",
       *           "op": "eq",
       *           "value": "granted"
       *         }
       *       ]
       *     }
       */
      rules?: {
        [key: string]: unknown;
      };
      /**
       * Format: int64
       * @description An AI model instance of your workspace; required when source_type is `model`. Default: `null`.
       * @example 12
       */
      model_instance?: number | null;
      /**
       * @description Score threshold, 0–1; only with source_type `model`. Default: `null`.
       * @example 0.8
       */
      min_score?: number | null;
      /**
       * @description Destination connections of your workspace. Default: `[]`.
       * @example [
       *       3
       *     ]
       */
      connections?: number[];
      /**
       * @description `draft` → `active`; `draft`/`active` → `archived`. Archived is final: the audience cannot change any more. Default: `"draft"`.
       * @example draft
       * @enum {string}
       */
      status?: 'draft' | 'active' | 'archived';
    };
    AudienceDestinationDto: {
      /**
       * Format: int64
       * @example 3
       */
      connection: number;
      /**
       * @example google_ads
       * @enum {string}
       */
      platform: 'google_ads' | 'meta_ads';
      /**
       * @description The list on the platform (a Google user list id, a Meta custom audience id); null until the first sync creates it.
       * @example 8123456789
       */
      platform_audience_id: string | null;
      /**
       * @description Why the destination cannot sync as it is, or null: `audience_flagged` (Meta flagged the audience), `scope_missing` (a Google grant without the Data Manager scope: reconnect), `terms_not_accepted` (an admin must accept the Customer Match terms on the Google connection), or the connection's own reason when it is `expired` or `revoked`.
       * @example null
       */
      status_reason: string | null;
      /**
       * @description The last run to this destination, or null.
       * @example {
       *       "id": 51,
       *       "status": "succeeded"
       *     }
       */
      last_run?: {
        /**
         * Format: int64
         * @description The run (`GET /api/v1/syncs/{id}/`).
         */
        id: number;
        /** @enum {string} */
        status: 'queued' | 'running' | 'awaiting_platform' | 'succeeded' | 'partially_failed' | 'failed' | 'cancelled';
      } | null;
      /**
       * Format: date-time
       * @description When a run last ended `succeeded` or `partially_failed`.
       * @example 2026-11-26T10:00:00.000Z
       */
      last_synced_at: string | null;
      /**
       * Format: int32
       * @description Members the destination holds, as accepted by the platform.
       * @example 15210
       */
      members_sent: number;
      /**
       * @description The match rate the last run read back (see the run).
       * @example 0.62
       */
      match_rate: number | null;
    };
    AudienceDetailDto: {
      /**
       * Format: int64
       * @example 41
       */
      readonly id: number;
      /**
       * Format: int64
       * @description Your workspace (customer) id.
       * @example 1
       */
      readonly customer: number;
      /** @example High-value churn risks */
      name: string;
      /** @example Customers with a churn score above 0.8. */
      description: string;
      /**
       * @example model
       * @enum {string}
       */
      source_type: 'rules' | 'model' | 'upload';
      /**
       * @example {
       *       "all": [
       *         {
       *           "trait": "plan",
       *           "op": "eq",
       *           "value": "pro"
       *         },
       *         {
       *           "trait": "ltv",
       *           "op": "gte",
       *           "value": 100
       *         },
       *         {
       *           "consent": "ad_personalization",
       *           "op": "eq",
       *           "value": "granted"
       *         }
       *       ]
       *     }
       */
      rules: {
        [key: string]: unknown;
      };
      /**
       * Format: int64
       * @example 12
       */
      model_instance: number | null;
      /** @example 0.8 */
      min_score: number | null;
      /**
       * @example [
       *       3
       *     ]
       */
      connections: number[];
      /**
       * @example draft
       * @enum {string}
       */
      status: 'draft' | 'active' | 'archived';
      /**
       * Format: int32
       * @description The exact member count as of `members_updated_at`; null before the first computation (SPEC 10.2).
       * @example 15230
       */
      readonly size: number | null;
      /**
       * Format: date-time
       * @description When the members were last computed; null before the first computation.
       * @example 2026-11-21T10:05:00.000Z
       */
      readonly members_updated_at: string | null;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly created_at: string;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly updated_at: string;
      /**
       * @description Each destination connection with its sync state (SPEC 10.3).
       * @example [
       *       {
       *         "connection": 3,
       *         "platform": "google_ads",
       *         "platform_audience_id": "8123456789",
       *         "status_reason": null,
       *         "last_run": {
       *           "id": 51,
       *           "status": "succeeded"
       *         },
       *         "last_synced_at": "2026-11-26T10:00:00.000Z",
       *         "members_sent": 15210,
       *         "match_rate": 0.62
       *       }
       *     ]
       */
      readonly destinations: components['schemas']['AudienceDestinationDto'][];
    };
    UpdateAudienceDto: {
      /**
       * @description Trimmed; unique in the workspace ignoring letter case.
       * @example High-value churn risks
       */
      name?: string;
      /** @example Customers with a churn score above 0.8. */
      description?: string;
      /**
       * @description Where members come from: rules, a model, or an upload.
       * @example model
       * @enum {string}
       */
      source_type?: 'rules' | 'model' | 'upload';
      /**
       * @description Who a rules audience selects (SPEC 10.2): `{"all": [...]}`, `{"any": [...]}`, `{"not": {...}}`, a trait condition `{"trait", "op", "value"}` (ops eq, neq, gt, gte, lt, lte, in, not_in (≤ 1,000 values), contains, exists, not_exists) or a consent condition `{"consent": "ad_user_data" | "ad_personalization", "op": eq | neq | in | not_in, "value"}`. `{}` selects nobody. Comparisons are typed: a number matches numbers only; a missing trait matches only `not_exists`. Errors come under `rules.<path>`, e.g. `rules.all.2.op`. At most 64 KiB as JSON, nested at most 10 levels.
       * @example {
       *       "all": [
       *         {
       *           "trait": "plan",
       *           "op": "eq",
       *           "value": "pro"
       *         },
       *         {
       *           "trait": "ltv",
       *           "op": "gte",
       *           "value": 100
       *         },
       *         {
       *           "consent": "ad_personalization",
       *           "op": "eq",
       *           "value": "granted"
       *         }
       *       ]
       *     }
       */
      rules?: {
        [key: string]: unknown;
      };
      /**
       * Format: int64
       * @description An AI model instance of your workspace; required when source_type is `model`.
       * @example 12
       */
      model_instance?: number | null;
      /**
       * @description Score threshold, 0–1; only with source_type `model`.
       * @example 0.8
       */
      min_score?: number | null;
      /**
       * @description Destination connections of your workspace.
       * @example [
       *       3
       *     ]
       */
      connections?: number[];
      /**
       * @description `draft` → `active`; `draft`/`active` → `archived`. Archived is final: the audience cannot change any more.
       * @example draft
       * @enum {string}
       */
      status?: 'draft' | 'active' | 'archived';
    };
    SignalDeliveryDto: {
      /**
       * Format: int64
       * @description Events accepted (duplicates not counted).
       * @example 1200
       */
      received: number;
      /**
       * Format: int64
       * @description Events the platform accepted.
       * @example 1180
       */
      delivered: number;
      /**
       * Format: int64
       * @description Events that will not be delivered: refused by the platform, out of its time window, or held longer than 7 days (expired).
       * @example 3
       */
      failed: number;
      /**
       * Format: int64
       * @description Events still to be delivered, including those held while the signal is paused or failed.
       * @example 17
       */
      pending: number;
      /**
       * Format: date-time
       * @example 2026-11-21T10:05:00.000Z
       */
      last_delivered_at: string | null;
      /**
       * @description The last delivery error: a reason code, a colon and the platform’s words (never a value the events carried).
       * @example rate_limited: Quota exceeded for quota metric.
       */
      last_error: string | null;
    };
    SignalDto: {
      /**
       * Format: int64
       * @example 57
       */
      readonly id: number;
      /**
       * Format: int64
       * @description Your workspace (customer) id.
       * @example 1
       */
      readonly customer: number;
      /** @example Purchase conversions to Google Ads */
      name: string;
      /** @example Offline purchases, sent hourly. */
      description: string;
      /**
       * @example conversion
       * @enum {string}
       */
      signal_type: 'conversion' | 'value' | 'score';
      /**
       * Format: int32
       * @description 0 draft, 1 active, 2 paused, 3 failed, 4 archived.
       * @example 1
       * @enum {integer}
       */
      status: 0 | 1 | 2 | 3 | 4;
      /**
       * Format: int64
       * @example 12
       */
      model_instance: number | null;
      /**
       * Format: int64
       * @example 41
       */
      audience: number | null;
      /**
       * Format: int64
       * @example 3
       */
      connection: number | null;
      /**
       * @description The destination settings of the connection’s platform (SPEC 10.4). Google: `{"conversion_action_id": "123456789"}` (digits). Meta: `{"pixel_id": "…", "event_name": "Purchase", "action_source": "website" | "app" | "phone_call" | "chat" | "email" | "physical_store" | "system_generated" | "business_messaging" | "other", "test_event_code": "TEST123"}` (`test_event_code` optional: it sends the events to Meta’s Test Events instead of the ads). Checked when `connection` is set: an unknown key or a wrong type is a 400 under `config.<key>`; a missing required key is allowed in a draft and a 400 on activation.
       * @example {
       *       "conversion_action_id": "123456789"
       *     }
       */
      config: {
        [key: string]: unknown;
      };
      /**
       * @description Why the delivery pipeline turned the signal 3 (failed), e.g. `destination_refused: The conversion action does not exist.`; null otherwise. Cleared when it is active again.
       * @example null
       */
      readonly status_reason: string | null;
      readonly delivery: components['schemas']['SignalDeliveryDto'];
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly created_at: string;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly updated_at: string;
    };
    CreateSignalDto: {
      /**
       * @description Trimmed.
       * @example Purchase conversions to Google Ads
       */
      name: string;
      /**
       * @description Default: `""`.
       * @example Offline purchases, sent hourly.
       */
      description?: string;
      /**
       * @description What the signal carries: conversions, conversion values, or model scores.
       * @example conversion
       * @enum {string}
       */
      signal_type: 'conversion' | 'value' | 'score';
      /**
       * Format: int32
       * @description 0 draft, 1 active, 2 paused, 3 failed, 4 archived. An integer: `"1"` (a string) is refused. On create only 0 (the default), 1 (needs an active `connection`) and 4 are accepted, as if the signal started as a draft. Transitions: 0→1, 1→2, 2→1, 3→1, and any status but 4 → 4; 4 (archived) is final and the signal cannot change any more. Setting the status a signal already has changes nothing. Activating (→1) needs `connection` to be an active connection of your workspace. 3 (failed) is set by the delivery pipeline, never through the API. Default: `0`.
       * @example 0
       * @enum {integer}
       */
      status?: 0 | 1 | 2 | 3 | 4;
      /**
       * Format: int64
       * @description An AI model instance of your workspace whose outputs the signal sends. Default: `null`.
       * @example 12
       */
      model_instance?: number | null;
      /**
       * Format: int64
       * @description An audience of your workspace. Default: `null`.
       * @example 41
       */
      audience?: number | null;
      /**
       * Format: int64
       * @description The destination: a connection of your workspace. Must be active to activate the signal. Default: `null`.
       * @example 3
       */
      connection?: number | null;
      /**
       * @description The destination settings of the connection’s platform (SPEC 10.4). Google: `{"conversion_action_id": "123456789"}` (digits). Meta: `{"pixel_id": "…", "event_name": "Purchase", "action_source": "website" | "app" | "phone_call" | "chat" | "email" | "physical_store" | "system_generated" | "business_messaging" | "other", "test_event_code": "TEST123"}` (`test_event_code` optional: it sends the events to Meta’s Test Events instead of the ads). Checked when `connection` is set: an unknown key or a wrong type is a 400 under `config.<key>`; a missing required key is allowed in a draft and a 400 on activation. At most 64 KiB as JSON, nested at most 10 levels. Default: `{}`.
       * @example {
       *       "conversion_action_id": "123456789"
       *     }
       */
      config?: {
        [key: string]: unknown;
      };
    };
    UpdateSignalDto: {
      /**
       * @description Trimmed.
       * @example Purchase conversions to Google Ads
       */
      name?: string;
      /** @example Offline purchases, sent hourly. */
      description?: string;
      /**
       * @description What the signal carries: conversions, conversion values, or model scores.
       * @example conversion
       * @enum {string}
       */
      signal_type?: 'conversion' | 'value' | 'score';
      /**
       * Format: int32
       * @description 0 draft, 1 active, 2 paused, 3 failed, 4 archived. An integer: `"1"` (a string) is refused. On create only 0 (the default), 1 (needs an active `connection`) and 4 are accepted, as if the signal started as a draft. Transitions: 0→1, 1→2, 2→1, 3→1, and any status but 4 → 4; 4 (archived) is final and the signal cannot change any more. Setting the status a signal already has changes nothing. Activating (→1) needs `connection` to be an active connection of your workspace. 3 (failed) is set by the delivery pipeline, never through the API.
       * @example 0
       * @enum {integer}
       */
      status?: 0 | 1 | 2 | 3 | 4;
      /**
       * Format: int64
       * @description An AI model instance of your workspace whose outputs the signal sends.
       * @example 12
       */
      model_instance?: number | null;
      /**
       * Format: int64
       * @description An audience of your workspace.
       * @example 41
       */
      audience?: number | null;
      /**
       * Format: int64
       * @description The destination: a connection of your workspace. Must be active to activate the signal.
       * @example 3
       */
      connection?: number | null;
      /**
       * @description The destination settings of the connection’s platform (SPEC 10.4). Google: `{"conversion_action_id": "123456789"}` (digits). Meta: `{"pixel_id": "…", "event_name": "Purchase", "action_source": "website" | "app" | "phone_call" | "chat" | "email" | "physical_store" | "system_generated" | "business_messaging" | "other", "test_event_code": "TEST123"}` (`test_event_code` optional: it sends the events to Meta’s Test Events instead of the ads). Checked when `connection` is set: an unknown key or a wrong type is a 400 under `config.<key>`; a missing required key is allowed in a draft and a 400 on activation. At most 64 KiB as JSON, nested at most 10 levels.
       * @example {
       *       "conversion_action_id": "123456789"
       *     }
       */
      config?: {
        [key: string]: unknown;
      };
    };
    AiModelInstanceDto: {
      /**
       * Format: int64
       * @example 12
       */
      readonly id: number;
      /**
       * Format: int64
       * @description Your workspace (customer) id.
       * @example 1
       */
      readonly customer: number;
      /** @example Churn model EU */
      name: string;
      /**
       * @example churn
       * @enum {string}
       */
      model_type: 'propensity' | 'lifetime_value' | 'churn' | 'lookalike';
      /** @example gbm-v3 */
      base_model: string;
      /**
       * @example {
       *       "learning_rate": 0.05,
       *       "max_depth": 6
       *     }
       */
      parameters: {
        [key: string]: unknown;
      };
      /**
       * @description `pending` → `training`; `training` → `ready` or `failed`; `ready`/`failed` → `training` (retraining); any status → `archived`. Archived is final: the instance cannot change any more. Setting the current status again is a no-op; any other change is a 400 under `errors.status`. Each move into `training` adds 1 to `version`.
       * @example ready
       * @enum {string}
       */
      status: 'pending' | 'training' | 'ready' | 'failed' | 'archived';
      /**
       * @example {
       *       "auc": 0.91,
       *       "log_loss": 0.23
       *     }
       */
      metrics: {
        [key: string]: unknown;
      };
      /**
       * Format: int32
       * @description Training runs started: +1 each time the status moves into `training`.
       * @example 2
       */
      readonly version: number;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly created_at: string;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly updated_at: string;
    };
    CreateAiModelInstanceDto: {
      /**
       * @description Trimmed.
       * @example Churn model EU
       */
      name: string;
      /**
       * @description What the model predicts.
       * @example churn
       * @enum {string}
       */
      model_type: 'propensity' | 'lifetime_value' | 'churn' | 'lookalike';
      /**
       * @description The base model the instance is trained from. Trimmed.
       * @example gbm-v3
       */
      base_model: string;
      /**
       * @description Training parameters. At most 64 KiB as JSON, nested at most 10 levels. Default: `{}`.
       * @example {
       *       "learning_rate": 0.05,
       *       "max_depth": 6
       *     }
       */
      parameters?: {
        [key: string]: unknown;
      };
      /**
       * @description `pending` → `training`; `training` → `ready` or `failed`; `ready`/`failed` → `training` (retraining); any status → `archived`. Archived is final: the instance cannot change any more. Setting the current status again is a no-op; any other change is a 400 under `errors.status`. Each move into `training` adds 1 to `version`. On create, `pending` or a status reachable from it (`training`, `archived`). Default: `"pending"`.
       * @example training
       * @enum {string}
       */
      status?: 'pending' | 'training' | 'ready' | 'failed' | 'archived';
      /**
       * @description Evaluation results, written by the training pipeline. At most 64 KiB as JSON, nested at most 10 levels. Default: `{}`.
       * @example {
       *       "auc": 0.91,
       *       "log_loss": 0.23
       *     }
       */
      metrics?: {
        [key: string]: unknown;
      };
    };
    UpdateAiModelInstanceDto: {
      /**
       * @description Trimmed.
       * @example Churn model EU
       */
      name?: string;
      /**
       * @description What the model predicts.
       * @example churn
       * @enum {string}
       */
      model_type?: 'propensity' | 'lifetime_value' | 'churn' | 'lookalike';
      /**
       * @description The base model the instance is trained from. Trimmed.
       * @example gbm-v3
       */
      base_model?: string;
      /**
       * @description Training parameters. At most 64 KiB as JSON, nested at most 10 levels.
       * @example {
       *       "learning_rate": 0.05,
       *       "max_depth": 6
       *     }
       */
      parameters?: {
        [key: string]: unknown;
      };
      /**
       * @description `pending` → `training`; `training` → `ready` or `failed`; `ready`/`failed` → `training` (retraining); any status → `archived`. Archived is final: the instance cannot change any more. Setting the current status again is a no-op; any other change is a 400 under `errors.status`. Each move into `training` adds 1 to `version`. On create, `pending` or a status reachable from it (`training`, `archived`).
       * @example training
       * @enum {string}
       */
      status?: 'pending' | 'training' | 'ready' | 'failed' | 'archived';
      /**
       * @description Evaluation results, written by the training pipeline. At most 64 KiB as JSON, nested at most 10 levels.
       * @example {
       *       "auc": 0.91,
       *       "log_loss": 0.23
       *     }
       */
      metrics?: {
        [key: string]: unknown;
      };
    };
    ConnectionDto: {
      /**
       * Format: int64
       * @example 3
       */
      readonly id: number;
      /**
       * Format: int64
       * @description Your workspace (customer) id.
       * @example 1
       */
      readonly customer: number;
      /**
       * @example google_ads
       * @enum {string}
       */
      readonly platform: 'google_ads' | 'meta_ads';
      /**
       * @description The account id at the ad platform.
       * @example 1234567890
       */
      readonly external_account_id: string;
      /** @example Acme Shoes — EU */
      account_name: string;
      /**
       * @description Maintained by the platform: `expired` or `revoked` grants need the OAuth flow again.
       * @example active
       * @enum {string}
       */
      readonly status: 'active' | 'expired' | 'revoked' | 'error';
      /**
       * @description Why the connection is not `active`, machine-readable: `invalid_grant` (the provider no longer honours the grant: revoked or expired there), `token_expired`, `access_revoked` (the person removed the app or changed their password). On an `active` Google connection, `scope_missing`: the grant lacks `https://www.googleapis.com/auth/datamanager`, so audiences cannot sync to it (signals still deliver); reconnecting with every requested permission clears it. Null otherwise.
       * @example null
       * @enum {string|null}
       */
      readonly status_reason: 'invalid_grant' | 'token_expired' | 'access_revoked' | 'scope_missing' | null;
      /**
       * @description True when only a new grant helps: the grant is gone (`expired` or `revoked`), or a Google grant lacks the Data Manager scope (`status_reason` `scope_missing`). Offer "Reconnect", which runs the OAuth flow again and keeps this id.
       * @example false
       */
      readonly reauthorize_required: boolean;
      /**
       * @description The OAuth scopes the grant holds, as the provider reported them when it was made or last refreshed.
       * @example [
       *       "https://www.googleapis.com/auth/adwords",
       *       "https://www.googleapis.com/auth/datamanager"
       *     ]
       */
      readonly scopes: string[];
      /**
       * @description Google only: an admin declared Google's Customer Match terms accepted for this account; until then audience syncs to it fail with `terms_not_accepted`. Default false; always false on Meta connections. Only an admin may change it.
       * @example false
       */
      customer_match_terms_accepted: boolean;
      /**
       * Format: int64
       * @description The user who connected the account.
       * @example 7
       */
      readonly connected_by: number | null;
      /**
       * Format: date-time
       * @example 2026-11-21T11:00:00.000Z
       */
      readonly token_expires_at: string | null;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly last_refreshed_at: string | null;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly created_at: string;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly updated_at: string;
    };
    UpdateConnectionDto: {
      /**
       * @description Display name of the account; trimmed.
       * @example Acme Shoes — EU
       */
      account_name?: string;
      /**
       * @description Google connections only: your organisation accepts Google's Customer Match terms for this account (SPEC 10.3). Only an admin may change it; an editor or an API key that tries → 403. `true` on a Meta connection → 400.
       * @example true
       */
      customer_match_terms_accepted?: boolean;
    };
    StartConnectionFlowDto: {
      /**
       * @description The page of the web interface the browser lands on afterwards (a path under `/app`, never an absolute URL), with `connected=N` or `error=<code>` and `platform` added to its query. Default `/app/connections`.
       * @example /app/connections
       */
      return_to?: string;
    };
    ConnectionFlowStartedDto: {
      /**
       * Format: uri
       * @description Send the browser here. The provider sends it back to `/oauth/connections/{platform}/callback`.
       * @example https://accounts.google.com/o/oauth2/v2/auth?client_id=1234.apps.googleusercontent.com&scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fadwords&access_type=offline&state=3xk2q0aLr7VbN1cT9wE4yH6uJ8mP5sD2fG0hK7lZ3xC&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256
       */
      authorization_url: string;
    };
    ConsentDto: {
      /**
       * @description Consent to send the person’s data to the ad platforms.
       * @default unspecified
       * @example granted
       * @enum {string}
       */
      ad_user_data: 'granted' | 'denied' | 'unspecified';
      /**
       * @description Consent to personalised advertising.
       * @default unspecified
       * @example granted
       * @enum {string}
       */
      ad_personalization: 'granted' | 'denied' | 'unspecified';
    };
    PersonDto: {
      /**
       * Format: int64
       * @example 77
       */
      readonly id: number;
      /**
       * Format: int64
       * @description Your workspace (customer) id.
       * @example 1
       */
      readonly customer: number;
      /** @example crm-000123 */
      external_id: string;
      /**
       * @description Which kinds of key the person has (`address`: first and last name, country and postal code all present); never a value or a hash.
       * @example [
       *       "email",
       *       "phone"
       *     ]
       */
      readonly matched_keys: ('email' | 'phone' | 'address' | 'mobile_ad_id')[];
      /**
       * @example {
       *       "plan": "pro",
       *       "ltv": 420.5,
       *       "newsletter": true
       *     }
       */
      traits: {
        [key: string]: string | number | boolean;
      };
      consent: components['schemas']['ConsentDto'];
      /**
       * @description Ids of the audiences the person is a member of, ascending (SPEC 10.2): as of each audience’s last membership computation.
       * @example []
       */
      readonly audiences: number[];
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly created_at: string;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly updated_at: string;
    };
    IdentifiersDto: {
      /**
       * @description One email or up to 5. Trimmed and lowercased, then hashed.
       * @example ada@example.com
       */
      email?: string | string[];
      /**
       * @description One phone number or up to 5, E.164. Without `+` it is read in `country_code` (or the stored one), else as E.164 without its plus.
       * @example +15551234567
       */
      phone?: string | string[];
      /**
       * @description Lowercased (NFC), then hashed.
       * @example Ada
       */
      first_name?: string;
      /**
       * @description Lowercased (NFC), then hashed.
       * @example Lovelace
       */
      last_name?: string;
      /**
       * @description ISO 3166-1 alpha-2; kept in clear.
       * @example US
       */
      country_code?: string;
      /**
       * @description Kept in clear, trimmed.
       * @example 94043
       */
      postal_code?: string;
      /**
       * Format: uuid
       * @description A mobile advertising id (Meta only), kept as given, lowercase.
       * @example 6d92078a-8246-4ba4-ae5b-76104861e7dc
       */
      mobile_ad_id?: string;
      /**
       * @description SHA-256 of the trimmed, lowercased email, as 64 lowercase hex; sent to both platforms as given.
       * @example aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
       */
      email_sha256?: string | string[];
      /**
       * @description SHA-256 of the E.164 phone with `+`, as 64 lowercase hex (Google’s form; sent to Google only).
       * @example bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
       */
      phone_sha256?: string | string[];
    };
    PersonWriteDto: {
      /**
       * @description Your id for the person, unique in the workspace. In a batch without one it is derived: `email:` + the first 32 hex characters of the Google email hash, else `phone:` + likewise.
       * @example crm-000123
       */
      external_id?: string;
      /** @description Write-only. A write replaces the identifiers it names (`null` or blank removes one) and keeps the others. */
      identifiers?: components['schemas']['IdentifiersDto'];
      /**
       * @description Merged into the stored traits; `null` removes a key. Keys 1–64 of `[A-Za-z0-9_.-]`, at most 100 in all.
       * @example {
       *       "plan": "pro",
       *       "ltv": 420.5,
       *       "newsletter": true,
       *       "old_key": null
       *     }
       */
      traits?: {
        [key: string]: (string | null) | number | boolean;
      };
      /** @description Either key may be left out: it keeps its stored value (`unspecified` for a new person). */
      consent?: components['schemas']['ConsentDto'];
    };
    BatchPeopleDto: {
      /**
       * @description Up to 1,000 people, upserted by external_id.
       * @example [
       *       {
       *         "external_id": "crm-000123",
       *         "identifiers": {
       *           "email": "ada@example.com",
       *           "phone": "+15551234567"
       *         },
       *         "traits": {
       *           "plan": "pro"
       *         }
       *       },
       *       {
       *         "identifiers": {
       *           "email": "grace@example.com"
       *         },
       *         "consent": {
       *           "ad_user_data": "granted",
       *           "ad_personalization": "denied"
       *         }
       *       }
       *     ]
       */
      people: components['schemas']['PersonWriteDto'][];
    };
    RejectedRowDto: {
      /**
       * Format: int32
       * @description The row’s 0-based position in `people`.
       * @example 2
       */
      index: number;
      /**
       * @description Field path → error codes: `invalid_email`, `invalid_phone`, `invalid_name`, `invalid_country_code`, `invalid_postal_code`, `invalid_mobile_ad_id`, `invalid_sha256`, `too_many_values`, `unknown_identifier`, `invalid_identifiers`, `invalid_external_id`, `missing_external_id`, `duplicate_external_id`, `invalid_traits`, `too_many_traits`, `invalid_trait_key`, `invalid_trait_value`, `invalid_consent`, `unknown_consent`, `unknown_field`, `invalid_person`.
       * @example {
       *       "identifiers.email": [
       *         "invalid_email"
       *       ]
       *     }
       */
      errors: {
        [key: string]: string[];
      };
    };
    BatchResultDto: {
      /**
       * Format: int32
       * @description People that did not exist before.
       * @example 2
       */
      created: number;
      /**
       * Format: int32
       * @description Existing people (same external_id) updated.
       * @example 1
       */
      updated: number;
      /**
       * @description Rows not applied, with why; the others were.
       * @example [
       *       {
       *         "index": 2,
       *         "errors": {
       *           "identifiers.email": [
       *             "invalid_email"
       *           ]
       *         }
       *       }
       *     ]
       */
      rejected: components['schemas']['RejectedRowDto'][];
    };
    UpdatePersonDto: {
      /**
       * @description Your id for the person, unique in the workspace. In a batch without one it is derived: `email:` + the first 32 hex characters of the Google email hash, else `phone:` + likewise.
       * @example crm-000123
       */
      external_id?: string;
      /** @description Write-only. A write replaces the identifiers it names (`null` or blank removes one) and keeps the others. */
      identifiers?: components['schemas']['IdentifiersDto'];
      /**
       * @description Merged into the stored traits; `null` removes a key. Keys 1–64 of `[A-Za-z0-9_.-]`, at most 100 in all.
       * @example {
       *       "plan": "pro",
       *       "ltv": 420.5,
       *       "newsletter": true,
       *       "old_key": null
       *     }
       */
      traits?: {
        [key: string]: (string | null) | number | boolean;
      };
      /** @description Either key may be left out: it keeps its stored value (`unspecified` for a new person). */
      consent?: components['schemas']['ConsentDto'];
    };
    ImportRowErrorDto: {
      /**
       * Format: int64
       * @description The 1-based line of the file (a CSV header is line 1).
       * @example 7
       */
      line: number;
      /**
       * @description Field path → error codes, as a people batch row gets them (`invalid_email`, `missing_external_id`, `duplicate_external_id`, `too_many_traits`, …), plus `non_field_errors`: `wrong_column_count`, `invalid_json`, `invalid_string`; and for a file refused whole, `file`: `not_csv_or_ndjson`, `no_usable_column`, `duplicate_column`, `too_many_columns`, `record_too_large`, `malformed_csv`, `merge_failed`.
       * @example {
       *       "identifiers.email": [
       *         "invalid_email"
       *       ]
       *     }
       */
      errors: {
        [key: string]: string[];
      };
    };
    ImportDto: {
      /**
       * Format: int64
       * @example 12
       */
      readonly id: number;
      /**
       * Format: int64
       * @description Your workspace (customer) id.
       * @example 1
       */
      readonly customer: number;
      /**
       * @example people
       * @enum {string}
       */
      target: 'people' | 'audience';
      /**
       * Format: int64
       * @description The audience of an audience import; null for people.
       * @example null
       */
      audience: number | null;
      /**
       * @description How an audience import changes the members; null for people.
       * @example add
       * @enum {string|null}
       */
      mode: 'add' | 'remove' | 'replace' | null;
      /**
       * @description An import applies all its accepted rows (`succeeded`) or, when it fails, nothing (`failed`, with the reason in `errors_sample`).
       * @example queued
       * @enum {string}
       */
      status: 'queued' | 'processing' | 'succeeded' | 'failed';
      /**
       * Format: int64
       * @description Rows read (the CSV header not counted).
       * @example 1000
       */
      rows_total: number;
      /**
       * Format: int64
       * @example 998
       */
      rows_accepted: number;
      /**
       * Format: int64
       * @example 2
       */
      rows_rejected: number;
      /**
       * @description Rejected rows counted by error code (a row with two codes counts under both).
       * @example {
       *       "invalid_email": 2
       *     }
       */
      rejected_by_reason: {
        [key: string]: number;
      };
      /**
       * @description Up to 100 rejected rows, first lines first.
       * @example [
       *       {
       *         "line": 7,
       *         "errors": {
       *           "identifiers.email": [
       *             "invalid_email"
       *           ]
       *         }
       *       }
       *     ]
       */
      errors_sample: components['schemas']['ImportRowErrorDto'][];
      /**
       * Format: date-time
       * @example 2026-05-04T10:00:00.000Z
       */
      readonly created_at: string;
      /**
       * Format: date-time
       * @description When the import last changed: its status or its counts.
       * @example 2026-05-04T10:00:09.000Z
       */
      readonly updated_at: string;
      /**
       * Format: date-time
       * @description When the merge started.
       * @example 2026-05-04T10:00:02.000Z
       */
      readonly started_at: string | null;
      /**
       * Format: date-time
       * @example 2026-05-04T10:00:09.000Z
       */
      readonly finished_at: string | null;
    };
    ChangeMembersDto: {
      /**
       * @description `add`: the rows are upserted as people, then made members. `remove`: the people the rows name (by `external_id`, or by the one derived from their email or phone) leave.
       * @example add
       * @enum {string}
       */
      action: 'add' | 'remove';
      /**
       * @description Up to 1,000 rows shaped as in `POST /api/v1/people/batch/`.
       * @example [
       *       {
       *         "external_id": "crm-000123",
       *         "identifiers": {
       *           "email": "ada@example.com"
       *         },
       *         "traits": {
       *           "plan": "pro"
       *         }
       *       },
       *       {
       *         "external_id": "crm-000124"
       *       }
       *     ]
       */
      people: components['schemas']['PersonWriteDto'][];
    };
    MembersChangedDto: {
      /**
       * Format: int32
       * @description People who became members (not members before).
       * @example 2
       */
      added: number;
      /**
       * Format: int32
       * @description People who left the audience (members before).
       * @example 0
       */
      removed: number;
      /**
       * @description Rows not applied, with their index and error codes; the others were.
       * @example [
       *       {
       *         "index": 1,
       *         "errors": {
       *           "identifiers.email": [
       *             "invalid_email"
       *           ]
       *         }
       *       }
       *     ]
       */
      rejected: components['schemas']['RejectedRowDto'][];
    };
    ScoreDto: {
      /**
       * @description The person’s external_id.
       * @example crm-000123
       */
      external_id: string;
      /**
       * @description The score, 0–1.
       * @example 0.83
       */
      score: number;
    };
    WriteScoresDto: {
      /**
       * @description Up to 10,000 scores; a later entry for the same external_id wins. Unknown external ids are answered, not stored.
       * @example [
       *       {
       *         "external_id": "crm-000123",
       *         "score": 0.83
       *       },
       *       {
       *         "external_id": "crm-000124",
       *         "score": 0.12
       *       }
       *     ]
       */
      scores: components['schemas']['ScoreDto'][];
    };
    ScoresWrittenDto: {
      /**
       * Format: int32
       * @description Scores stored (one per person).
       * @example 1
       */
      written: number;
      /**
       * @description The external ids of the call that name no person of the workspace.
       * @example [
       *       "crm-000124"
       *     ]
       */
      unknown_external_ids: string[];
    };
    SyncRunDto: {
      /**
       * Format: int64
       * @example 51
       */
      readonly id: number;
      /**
       * Format: int64
       * @example 1
       */
      readonly customer: number;
      /**
       * Format: int64
       * @example 41
       */
      audience: number;
      /**
       * Format: int64
       * @description The destination: one of the audience's connections.
       * @example 3
       */
      connection: number;
      /**
       * @description The list on the platform (Google user list id, Meta custom audience id); null until the first real run creates it.
       * @example 8123456789
       */
      platform_audience_id: string | null;
      /**
       * @description What started the run.
       * @example manual
       * @enum {string}
       */
      trigger: 'manual' | 'membership_change' | 'schedule';
      /**
       * @description A dry run counts what it would send and sends nothing.
       * @example false
       */
      dry_run: boolean;
      /**
       * @description `queued` → `running` → (`awaiting_platform`, Google: waiting for its verdict on the requests) → `succeeded`, `partially_failed` (some members failed: see `failed_by_reason`) or `failed` (see `error_code`); a queued run can be `cancelled`.
       * @example succeeded
       * @enum {string}
       */
      status: 'queued' | 'running' | 'awaiting_platform' | 'succeeded' | 'partially_failed' | 'failed' | 'cancelled';
      /**
       * Format: int64
       * @description Members to add or update when the run started; null before it starts.
       * @example 1200
       */
      planned_add: number | null;
      /**
       * Format: int64
       * @description People to remove from the destination when the run started; null before it starts.
       * @example 35
       */
      planned_remove: number | null;
      /**
       * Format: int64
       * @description Members the platform accepted.
       * @example 1198
       */
      added: number;
      /**
       * Format: int64
       * @description People the platform accepted to remove.
       * @example 35
       */
      removed: number;
      /**
       * Format: int64
       * @description Members not sent or refused, counted by reason in `failed_by_reason`.
       * @example 2
       */
      failed: number;
      /**
       * Format: int64
       * @description Members whose consent (`ad_user_data` or `ad_personalization`) is denied: sent nowhere, and removed where they were.
       * @example 14
       */
      skipped_consent: number;
      /**
       * Format: int64
       * @description Members with no key this platform matches on.
       * @example 3
       */
      skipped_unmatchable: number;
      /**
       * @description Failed members by reason: `invalid_hash`, `invalid_field`, `too_large` (checked before sending), `audience_too_small` (Meta refused the removal; retried at the next sync), `invalid_request`, `request_failed`, or the reasons Google counts in its verdict (`INVALID_SHA256_FORMAT`, …).
       * @example {
       *       "invalid_hash": 2
       *     }
       */
      failed_by_reason: {
        [key: string]: number;
      };
      /**
       * @description Google's match rate of the list, or for Meta the middle of the audience's approximate size over the members sent; null when the platform gives none.
       * @example 0.62
       */
      match_rate: number | null;
      /**
       * @description Why the run failed or stopped.
       * @example null
       * @enum {string|null}
       */
      error_code:
        | 'reauthorize_required'
        | 'terms_not_accepted'
        | 'rate_limited'
        | 'platform_unavailable'
        | 'audience_flagged'
        | 'not_found'
        | 'permission_denied'
        | 'invalid_request'
        | 'platform_error'
        | 'destination_removed'
        | 'audience_not_active'
        | 'verdict_unavailable'
        | null;
      /**
       * @description The platform's own message, or ours, in words; never a hash or a token.
       * @example null
       */
      error_detail: string | null;
      /**
       * Format: int64
       * @description Starts of the run, resumes included.
       * @example 1
       */
      attempts: number;
      /**
       * Format: date-time
       * @example 2026-11-26T10:00:00.000Z
       */
      queued_at: string;
      /**
       * Format: date-time
       * @example 2026-11-26T10:00:00.000Z
       */
      started_at: string | null;
      /**
       * Format: date-time
       * @example 2026-11-26T10:00:00.000Z
       */
      finished_at: string | null;
    };
    CreateSyncDto: {
      /**
       * Format: int64
       * @description An active audience of your workspace.
       * @example 41
       */
      audience: number;
      /**
       * Format: int64
       * @description One of the audience's destination connections; null or left out: every destination of the audience. Default: `null`.
       * @example 3
       */
      connection?: number | null;
      /**
       * @description Count what would be sent and send nothing. Default: `false`.
       * @example false
       */
      dry_run?: boolean;
    };
    SyncRunsDto: {
      /**
       * @description One run per destination: a new one, or the one already queued or running for it.
       * @example [
       *       {
       *         "id": 51,
       *         "customer": 1,
       *         "audience": 41,
       *         "connection": 3,
       *         "platform_audience_id": "8123456789",
       *         "trigger": "manual",
       *         "dry_run": false,
       *         "status": "queued",
       *         "planned_add": null,
       *         "planned_remove": null,
       *         "added": 0,
       *         "removed": 0,
       *         "failed": 0,
       *         "skipped_consent": 0,
       *         "skipped_unmatchable": 0,
       *         "failed_by_reason": {},
       *         "match_rate": null,
       *         "error_code": null,
       *         "error_detail": null,
       *         "attempts": 0,
       *         "queued_at": "2026-11-26T10:00:00.000Z",
       *         "started_at": null,
       *         "finished_at": null
       *       }
       *     ]
       */
      runs: components['schemas']['SyncRunDto'][];
    };
    SignalEventWriteDto: {
      /**
       * @description Your id of the event, unique per signal for 30 days: a repeat is counted in `duplicates` and not sent again.
       * @example order-10045
       */
      event_id: string;
      /**
       * Format: date-time
       * @description When it happened, ISO 8601 with a time zone. At most 7 days old for Meta and 90 for Google (7 without a connection), at most 5 minutes ahead.
       * @example 2026-11-21T09:58:00.000Z
       */
      event_time: string;
      /**
       * @description The conversion value; needs `currency`.
       * @example 49.9
       */
      value?: number;
      /**
       * @description ISO 4217 code of `value`.
       * @example EUR
       */
      currency?: string;
      /**
       * @description Your id of the person (sent to Meta hashed).
       * @example crm-000123
       */
      external_id?: string;
      /** @description As for people (SPEC 10.1): normalised and hashed on arrival per platform; the raw values are never stored. */
      identifiers?: components['schemas']['IdentifiersDto'];
      /**
       * @description Google click id; sent to Google as given.
       * @example Cj0KCQiA…
       */
      gclid?: string;
      /**
       * @description Meta click id (`_fbc` cookie); sent as given, never hashed.
       * @example fb.1.1700000000000.AbCdEf
       */
      fbc?: string;
      /**
       * @description Meta browser id (`_fbp` cookie); sent as given, never hashed.
       * @example fb.1.1700000000000.1234567890
       */
      fbp?: string;
      /**
       * @description IPv4 or IPv6 address of the person’s device; sent as given, never hashed.
       * @example 203.0.113.7
       */
      client_ip_address?: string;
      /**
       * @description The browser’s user agent; required for Meta `website` events.
       * @example Mozilla/5.0 (X11; Linux x86_64)
       */
      client_user_agent?: string;
      /**
       * Format: uri
       * @description The page where it happened; required for Meta `website` events.
       * @example https://shop.example.com/checkout/done
       */
      event_source_url?: string;
    };
    SignalEventsBatchDto: {
      /**
       * @description Up to 1,000 events.
       * @example [
       *       {
       *         "event_id": "order-10045",
       *         "event_time": "2026-11-21T09:58:00.000Z",
       *         "value": 49.9,
       *         "currency": "EUR",
       *         "identifiers": {
       *           "email": "ada@example.com"
       *         },
       *         "gclid": "Cj0KCQiA-example"
       *       }
       *     ]
       */
      events: components['schemas']['SignalEventWriteDto'][];
    };
    RejectedEventDto: {
      /**
       * Format: int32
       * @description The event’s 0-based position in `events`.
       * @example 1
       */
      index: number;
      /**
       * @description Field path → error codes: `required`, `unknown_field`, `invalid_event`, `invalid_event_id`, `invalid_event_time`, `event_time_too_old`, `event_time_in_future`, `invalid_value`, `invalid_currency`, `currency_required`, `invalid_external_id`, `invalid_gclid`, `invalid_fbc`, `invalid_fbp`, `invalid_client_ip_address`, `invalid_client_user_agent`, `invalid_event_source_url`, `no_match_key`, `required_for_website`, and the identifier codes of people (`invalid_email`, `invalid_phone`, …) under `identifiers.<field>`.
       * @example {
       *       "event_time": [
       *         "event_time_too_old"
       *       ]
       *     }
       */
      errors: {
        [key: string]: string[];
      };
    };
    EventsAcceptedDto: {
      /**
       * Format: int32
       * @description New events stored for delivery (or held).
       * @example 2
       */
      accepted: number;
      /**
       * Format: int32
       * @description Valid events whose `event_id` the signal already had within 30 days, or that repeat one earlier in this request: not stored again.
       * @example 1
       */
      duplicates: number;
      /**
       * @description Events not accepted, with why; the others were.
       * @example [
       *       {
       *         "index": 2,
       *         "errors": {
       *           "currency": [
       *             "invalid_currency"
       *           ]
       *         }
       *       }
       *     ]
       */
      rejected: components['schemas']['RejectedEventDto'][];
    };
    SignalEventDto: {
      /**
       * Format: int64
       * @example 9001
       */
      readonly id: number;
      /**
       * Format: int64
       * @description The signal.
       * @example 57
       */
      readonly signal: number;
      /** @example order-10045 */
      event_id: string;
      /**
       * Format: date-time
       * @example 2026-11-21T09:58:00.000Z
       */
      event_time: string;
      /** @example 49.9 */
      value: number | null;
      /** @example EUR */
      currency: string | null;
      /**
       * @description `pending` (to be sent), `delivered` (the platform accepted it), `failed` (it will not be sent; see `error`), `held` (the signal is paused or failed), `expired` (held longer than 7 days).
       * @example delivered
       * @enum {string}
       */
      status: 'pending' | 'delivered' | 'failed' | 'held' | 'expired';
      /**
       * Format: int32
       * @description Tries of the request that last carried it, when it failed.
       * @example 1
       */
      attempts: number;
      /**
       * @description Why it failed or last went wrong: a reason code, a colon and the platform’s words.
       * @example null
       */
      error: string | null;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly received_at: string;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:02.000Z
       */
      readonly delivered_at: string | null;
    };
    WebhookDto: {
      /**
       * Format: int64
       * @example 4
       */
      readonly id: number;
      /**
       * Format: int64
       * @description Your workspace (customer) id.
       * @example 1
       */
      readonly customer: number;
      /**
       * Format: uri
       * @example https://hooks.example.com/audience-platform
       */
      url: string;
      /**
       * @example [
       *       "sync.failed",
       *       "connection.reauthorization_required"
       *     ]
       */
      events: ('sync.succeeded' | 'sync.failed' | 'connection.reauthorization_required' | 'signal.failed' | 'import.finished')[];
      /** @example Alerts to the integration team */
      description: string;
      /** @example true */
      enabled: boolean;
      /**
       * @description Why `enabled` is false: `disabled_by_user` (an admin turned it off), or `failing_for_24_hours` (every delivery attempt failed for 24 hours, so the service stopped sending; fix the endpoint, then PATCH `enabled: true`). Null while enabled.
       * @example null
       * @enum {string|null}
       */
      readonly disabled_reason: 'disabled_by_user' | 'failing_for_24_hours' | null;
      /**
       * Format: date-time
       * @example null
       */
      readonly disabled_at: string | null;
      /**
       * Format: date-time
       * @description Since when every attempt has failed; null after a delivery got through. At 24 hours the endpoint is disabled.
       * @example null
       */
      readonly failing_since: string | null;
      /**
       * Format: date-time
       * @description After a secret rotation: until when the previous secret still signs deliveries beside the new one.
       * @example null
       */
      readonly rotation_overlap_ends_at: string | null;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly created_at: string;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly updated_at: string;
    };
    CreateWebhookDto: {
      /**
       * Format: uri
       * @description Where deliveries are POSTed. In production it must be https and its host must resolve only to public addresses (not loopback, private, carrier-grade NAT, link-local, metadata, unique-local, multicast or unspecified), which is checked here and again before each delivery; outside production http (e.g. to localhost) is allowed. No user name, password or fragment.
       * @example https://hooks.example.com/audience-platform
       */
      url: string;
      /**
       * @description The events this endpoint receives, at least one, each once: `sync.succeeded`, `sync.failed` (an audience sync run ended), `connection.reauthorization_required` (a connection lost its grant or lacks a permission and must be connected again), `signal.failed` (a signal turned failed), `import.finished` (an import succeeded or failed).
       * @example [
       *       "sync.failed",
       *       "connection.reauthorization_required"
       *     ]
       */
      events: ('sync.succeeded' | 'sync.failed' | 'connection.reauthorization_required' | 'signal.failed' | 'import.finished')[];
      /**
       * @description Default: `""`.
       * @example Alerts to the integration team
       */
      description?: string;
    };
    CreatedWebhookDto: {
      /**
       * Format: int64
       * @example 4
       */
      readonly id: number;
      /**
       * Format: int64
       * @description Your workspace (customer) id.
       * @example 1
       */
      readonly customer: number;
      /**
       * Format: uri
       * @example https://hooks.example.com/audience-platform
       */
      url: string;
      /**
       * @example [
       *       "sync.failed",
       *       "connection.reauthorization_required"
       *     ]
       */
      events: ('sync.succeeded' | 'sync.failed' | 'connection.reauthorization_required' | 'signal.failed' | 'import.finished')[];
      /** @example Alerts to the integration team */
      description: string;
      /** @example true */
      enabled: boolean;
      /**
       * @description Why `enabled` is false: `disabled_by_user` (an admin turned it off), or `failing_for_24_hours` (every delivery attempt failed for 24 hours, so the service stopped sending; fix the endpoint, then PATCH `enabled: true`). Null while enabled.
       * @example null
       * @enum {string|null}
       */
      readonly disabled_reason: 'disabled_by_user' | 'failing_for_24_hours' | null;
      /**
       * Format: date-time
       * @example null
       */
      readonly disabled_at: string | null;
      /**
       * Format: date-time
       * @description Since when every attempt has failed; null after a delivery got through. At 24 hours the endpoint is disabled.
       * @example null
       */
      readonly failing_since: string | null;
      /**
       * Format: date-time
       * @description After a secret rotation: until when the previous secret still signs deliveries beside the new one.
       * @example null
       */
      readonly rotation_overlap_ends_at: string | null;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly created_at: string;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly updated_at: string;
      /**
       * @description The signing secret (Standard Webhooks: `whsec_` and 32 bytes in base64), shown only in this response. Keep it to verify `webhook-signature` (docs/webhooks.md); if it is lost, rotate it.
       * @example whsec_YW4gZXhhbXBsZSBrZXksIG5ldmVyIGEgcmVhbCBvbmU=
       */
      readonly secret: string;
    };
    UpdateWebhookDto: {
      /**
       * Format: uri
       * @description Where deliveries are POSTed. In production it must be https and its host must resolve only to public addresses (not loopback, private, carrier-grade NAT, link-local, metadata, unique-local, multicast or unspecified), which is checked here and again before each delivery; outside production http (e.g. to localhost) is allowed. No user name, password or fragment.
       * @example https://hooks.example.com/audience-platform
       */
      url?: string;
      /**
       * @description The events this endpoint receives, at least one, each once: `sync.succeeded`, `sync.failed` (an audience sync run ended), `connection.reauthorization_required` (a connection lost its grant or lacks a permission and must be connected again), `signal.failed` (a signal turned failed), `import.finished` (an import succeeded or failed).
       * @example [
       *       "sync.failed",
       *       "connection.reauthorization_required"
       *     ]
       */
      events?: ('sync.succeeded' | 'sync.failed' | 'connection.reauthorization_required' | 'signal.failed' | 'import.finished')[];
      /** @example Alerts to the integration team */
      description?: string;
      /**
       * @description Whether events are delivered. `false` stops deliveries (`disabled_reason` `disabled_by_user`); `true` enables it again and clears `disabled_reason`, also after the service disabled a failing endpoint.
       * @example true
       */
      enabled?: boolean;
    };
    WebhookSecretDto: {
      /**
       * @description The new signing secret, shown only in this response. The previous one keeps signing beside it for 24 hours.
       * @example whsec_YW4gZXhhbXBsZSBrZXksIG5ldmVyIGEgcmVhbCBvbmU=
       */
      readonly secret: string;
      /**
       * Format: date-time
       * @description Until when deliveries also carry a signature made with the previous secret.
       * @example 2026-11-22T10:00:00.000Z
       */
      readonly rotation_overlap_ends_at: string;
    };
    WebhookDeliveryDto: {
      /**
       * Format: int64
       * @example 918
       */
      readonly id: number;
      /**
       * @description The event; `webhook.test` is the one `POST /api/v1/webhooks/{id}/test/` sends.
       * @example sync.failed
       * @enum {string}
       */
      readonly event_type:
        'sync.succeeded' | 'sync.failed' | 'connection.reauthorization_required' | 'signal.failed' | 'import.finished' | 'webhook.test';
      /**
       * @description The `webhook-id` header: the same on every attempt of the event, so a receiver can drop duplicates by it.
       * @example msg_5f2c1d3e4b6a79808192a3b4c5d6e7f8
       */
      readonly event_id: string;
      /**
       * Format: int64
       * @description Attempts made so far (0 before the first).
       * @example 2
       */
      readonly attempt: number;
      /**
       * @description `pending`: not yet delivered, an attempt is due at `next_attempt_at`; `succeeded`: the endpoint answered 2xx in time; `failed`: no attempt succeeded within 24 hours, or the endpoint was disabled or deleted meanwhile.
       * @example pending
       * @enum {string}
       */
      readonly status: 'pending' | 'succeeded' | 'failed';
      /**
       * Format: int32
       * @description The HTTP status of the last attempt; null when it got no answer (refused, timed out) or none was made.
       * @example 500
       */
      readonly response_status: number | null;
      /**
       * Format: int64
       * @description How long the last attempt took, in milliseconds.
       * @example 87
       */
      readonly duration_ms: number | null;
      /**
       * @description What went wrong with the last attempt, in words; null after a success or before the first attempt.
       * @example The endpoint answered 500; only a 2xx counts as received.
       */
      readonly error: string | null;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      readonly created_at: string;
      /**
       * Format: date-time
       * @description When the next attempt runs, while `pending`; null once the delivery succeeded or failed.
       * @example 2026-11-21T10:01:00.000Z
       */
      readonly next_attempt_at: string | null;
    };
    WebConfigDto: {
      /**
       * @description Configured social-login providers.
       * @example [
       *       "google-oauth2"
       *     ]
       */
      social_providers: ('google-oauth2' | 'facebook')[];
      /**
       * @description Ad platforms whose OAuth app is configured (`/oauth/connections/{platform}/start`).
       * @example [
       *       "google-ads",
       *       "meta-ads"
       *     ]
       */
      ad_platforms: ('google-ads' | 'meta-ads')[];
    };
    WebSessionDto: {
      /**
       * @description Access token (JWT) for `Authorization: Bearer …`; kept in memory by the web interface.
       * @example eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3IiwidHlwZSI6ImFjY2VzcyJ9.c2lnbmF0dXJl
       */
      access: string;
      /**
       * Format: int32
       * @description Seconds until the access token expires.
       * @example 900
       */
      expires_in: number;
    };
    McpTokenDto: {
      /**
       * Format: int64
       * @example 3
       */
      id: number;
      /** @example Claude Desktop on my laptop */
      name: string;
      /**
       * @description Public part of the token, to recognise it; not a secret.
       * @example k3x9a0b1c2d3
       */
      prefix: string;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      created_at: string;
      /**
       * Format: date-time
       * @example 2027-02-19T10:00:00.000Z
       */
      expires_at: string;
      /**
       * Format: date-time
       * @example null
       */
      last_used_at: string | null;
    };
    CreateMcpTokenDto: {
      /** @example Claude Desktop on my laptop */
      name: string;
      /**
       * Format: int32
       * @description Default: `90`.
       * @example 30
       */
      expires_in_days?: number;
    };
    CreatedMcpTokenDto: {
      /**
       * Format: int64
       * @example 3
       */
      id: number;
      /** @example Claude Desktop on my laptop */
      name: string;
      /**
       * @description Public part of the token, to recognise it; not a secret.
       * @example k3x9a0b1c2d3
       */
      prefix: string;
      /**
       * Format: date-time
       * @example 2026-11-21T10:00:00.000Z
       */
      created_at: string;
      /**
       * Format: date-time
       * @example 2027-02-19T10:00:00.000Z
       */
      expires_at: string;
      /**
       * Format: date-time
       * @example null
       */
      last_used_at: string | null;
      /**
       * @description The secret token, shown only in this response. Send it as `Authorization: Bearer <token>` to /mcp.
       * @example mcp_k3x9a0b1c2d3_3q2Jx0cV7m1Wq0bY2d3f4g5h6j7k8l9z0x1c2v3b4n5
       */
      token: string;
    };
    ProblemDetailsDto: {
      /**
       * @example about:blank
       * @enum {string}
       */
      type: 'about:blank';
      /**
       * @description The HTTP reason phrase of `status`.
       * @example Bad Request
       */
      title: string;
      /**
       * Format: int32
       * @example 400
       */
      status: number;
      /**
       * @description Stable machine-readable error code.
       * @example validation_error
       * @enum {string}
       */
      code:
        | 'validation_error'
        | 'parse_error'
        | 'not_authenticated'
        | 'authentication_failed'
        | 'token_not_valid'
        | 'permission_denied'
        | 'not_found'
        | 'method_not_allowed'
        | 'conflict'
        | 'payload_too_large'
        | 'unsupported_media_type'
        | 'throttled'
        | 'internal_error'
        | 'service_unavailable';
      /** @example Some fields are invalid. */
      detail: string;
      /**
       * @description Only for `validation_error`: field path (nested paths joined with dots) → messages.
       * @example {
       *       "name": [
       *         "This field is required."
       *       ]
       *     }
       */
      errors?: {
        [key: string]: string[];
      };
      /**
       * @description Equals the X-Request-Id response header.
       * @example 9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10
       */
      request_id: string;
    };
  };
  responses: never;
  parameters: never;
  requestBodies: never;
  headers: {
    /** @description The request id: the `X-Request-Id` sent (1–128 characters of `[A-Za-z0-9._:-]`), else a generated UUID. Quote it in reports. */
    'X-Request-Id': string;
    /** @description What is left of the caller’s budget this minute (IETF RateLimit draft): `"default";r=<remaining>;t=<seconds to reset>`. Absent on a 413 or 415, which the body parser answers before the budget is counted. */
    RateLimit: string;
    /** @description The budget: `"default";q=<requests>;w=60` (RATE_LIMIT_PER_MINUTE per identity, or per client IP on public endpoints). */
    'RateLimit-Policy': string;
    /** @description The credentials this endpoint takes (`Bearer realm="api"`, `Api-Key`), and `error="invalid_token"` for a bad token. */
    'WWW-Authenticate': string;
    /** @description `true` when this is the stored answer to an earlier request with the same `Idempotency-Key`; absent otherwise. */
    'Idempotent-Replayed': 'true';
    /** @description Only with CORS on (CORS_ORIGINS, off by default) and an `Origin` it lists: that origin, so a browser page there may read the answer. */
    'Access-Control-Allow-Origin': string;
  };
  pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
  users_me: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The signed-in user. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CurrentUserDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Missing credentials (`not_authenticated`) or a bad one (`authentication_failed`, `token_not_valid`). */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Authenticated, but not allowed to do this (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  jwt_create: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['TokenObtainDto'];
      };
    };
    responses: {
      /** @description A new access and refresh token pair. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TokenPairDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Missing credentials (`not_authenticated`) or a bad one (`authentication_failed`, `token_not_valid`). */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Too many requests (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  jwt_refresh: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['TokenRefreshDto'];
      };
    };
    responses: {
      /** @description A new pair; the refresh token sent is spent. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TokenPairDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Missing credentials (`not_authenticated`) or a bad one (`authentication_failed`, `token_not_valid`). */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Too many requests (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  jwt_verify: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['TokenVerifyDto'];
      };
    };
    responses: {
      /** @description The token is valid. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['EmptyDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Missing credentials (`not_authenticated`) or a bad one (`authentication_failed`, `token_not_valid`). */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Too many requests (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  jwt_logout: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** @description No body. */
    requestBody?: {
      content: {
        'application/json': Record<string, never>;
      };
    };
    responses: {
      /** @description Logged out. */
      204: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description A body was sent and it is not valid JSON (`parse_error`); send none. */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Missing credentials (`not_authenticated`) or a bad one (`authentication_failed`, `token_not_valid`). */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Authenticated, but not allowed to do this (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  social_login_start: {
    parameters: {
      query: {
        /** @description Where the provider sends the browser back; one of SOCIAL_AUTH_ALLOWED_REDIRECT_URIS, exactly. */
        redirect_uri: string;
      };
      header?: never;
      path: {
        /** @description A configured provider; one that is not configured answers 404. */
        provider: 'google-oauth2' | 'facebook';
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The provider’s authorization URL. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AuthorizationUrlDto'];
        };
      };
      /** @description `redirect_uri` missing or not on the allow-list (`validation_error` under `errors.redirect_uri`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "redirect_uri": [
           *           "This redirect URI is not in SOCIAL_AUTH_ALLOWED_REDIRECT_URIS."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description An Authorization header was sent and it is not a valid access token (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description An API key: this endpoint is for users only (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The provider is unknown or not configured (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "No social login provider \"github\" is configured.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Too many requests (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Google’s discovery document could not be read, or the database is down (`service_unavailable`). */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "Google could not be reached. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  social_login_finish: {
    parameters: {
      query?: {
        /** @description As in the body. */
        iss?: string;
        /** @description As in the body. */
        state?: string;
        /** @description As in the body. */
        code?: string;
      };
      header?: never;
      path: {
        /** @description A configured provider; one that is not configured answers 404. */
        provider: 'google-oauth2' | 'facebook';
      };
      cookie?: never;
    };
    /** @description Or send the same fields in the query string. */
    requestBody?: {
      content: {
        'application/json': components['schemas']['SocialLoginDto'];
        'application/x-www-form-urlencoded': components['schemas']['SocialLoginDto'];
      };
    };
    responses: {
      /** @description Signed in (or linked): a new session’s tokens and the user. */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SocialLoginResultDto'];
        };
      };
      /** @description Unknown, used, expired or mismatched `state`, or a wrong `iss` (`validation_error` under `errors.state` / `errors.iss`); the provider refused the code or consent was denied (under `errors.code`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "state": [
           *           "Unknown or already used state; start the login again."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No active user for this identity, an unverified Google email, or an ID token that failed verification (`authentication_failed`); with an Authorization header: not a valid access token (`authentication_failed`, `token_not_valid`). */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "authentication_failed",
           *       "detail": "No active account found with the given credentials.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description An API key: this endpoint is for users only (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The provider is unknown or not configured (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "No social login provider \"github\" is configured.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Linking: this provider account is already linked to another user (`conflict`). */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 409,
           *       "title": "Conflict",
           *       "code": "conflict",
           *       "detail": "This Google account is already linked to another user.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The body is neither JSON nor a form (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Too many requests (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The provider could not be reached, or the database is down (`service_unavailable`, `Retry-After`). */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "Facebook could not be reached. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  audiences_list: {
    parameters: {
      query?: {
        /** @description Workspace id; any other than yours gives an empty page. */
        customer?: number;
        /** @description Only this status. */
        status?: 'draft' | 'active' | 'archived';
        /** @description Only this source type. */
        source_type?: 'rules' | 'model' | 'upload';
        /** @description Only audiences scored by this AI model instance. */
        model_instance?: number;
        /** @description Name contains this text, ignoring letter case. */
        search?: string;
        /** @description 1-based page number. Past the end, 0 or not a number → 404 `Invalid page.` */
        page?: number;
        /** @description Items per page; values above 100 are clamped to 100. */
        page_size?: number;
        /** @description Sort field, `-` for descending. Default `-id` (newest first). */
        ordering?: 'id' | '-id' | 'name' | '-name' | 'created_at' | '-created_at' | 'updated_at' | '-updated_at' | 'status' | '-status';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of results. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /**
             * Format: int64
             * @description Total number of items over all pages.
             * @example 57
             */
            count: number;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=3&status=1
             */
            next: string | null;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=1&status=1
             */
            previous: string | null;
            results: components['schemas']['AudienceDto'][];
          };
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  audiences_create: {
    parameters: {
      query?: never;
      header?: {
        /** @description Any unique string of 1–255 characters. A retry with the same key and the same body within 24 hours returns the first response (with `Idempotent-Replayed: true`) and creates nothing; the same key with a different body is a 409. Keys are per credential. */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateAudienceDto'];
      };
    };
    responses: {
      /** @description The new audience. */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'Idempotent-Replayed': components['headers']['Idempotent-Replayed'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AudienceDetailDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The Idempotency-Key was used with a different request, or that request is still running (`conflict`). */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 409,
           *       "title": "Conflict",
           *       "code": "conflict",
           *       "detail": "The request conflicts with the current state of the resource.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  audiences_retrieve: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The audience with its destinations. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AudienceDetailDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  audiences_destroy: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Deleted. */
      204: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Conflicts with the current state (`conflict`). */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 409,
           *       "title": "Conflict",
           *       "code": "conflict",
           *       "detail": "The request conflicts with the current state of the resource.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  audiences_partial_update: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UpdateAudienceDto'];
      };
    };
    responses: {
      /** @description The audience as it is now, with its destinations. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AudienceDetailDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  signals_list: {
    parameters: {
      query?: {
        /** @description Only this status code: 0 draft, 1 active, 2 paused, 3 failed, 4 archived. Anything else → 400. */
        status?: 0 | 1 | 2 | 3 | 4;
        /** @description Only this signal type. */
        signal_type?: 'conversion' | 'value' | 'score';
        /** @description Only signals fed by this AI model instance. */
        model_instance?: number;
        /** @description Only signals for this audience. */
        audience?: number;
        /** @description Only signals sent through this connection. */
        connection?: number;
        /** @description Name contains this text, ignoring letter case. */
        search?: string;
        /** @description 1-based page number. Past the end, 0 or not a number → 404 `Invalid page.` */
        page?: number;
        /** @description Items per page; values above 100 are clamped to 100. */
        page_size?: number;
        /** @description Sort field, `-` for descending. Default `-id` (newest first). */
        ordering?: 'id' | '-id' | 'name' | '-name' | 'created_at' | '-created_at' | 'updated_at' | '-updated_at' | 'status' | '-status';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of results. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /**
             * Format: int64
             * @description Total number of items over all pages.
             * @example 57
             */
            count: number;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=3&status=1
             */
            next: string | null;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=1&status=1
             */
            previous: string | null;
            results: components['schemas']['SignalDto'][];
          };
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  signals_create: {
    parameters: {
      query?: never;
      header?: {
        /** @description Any unique string of 1–255 characters. A retry with the same key and the same body within 24 hours returns the first response (with `Idempotent-Replayed: true`) and creates nothing; the same key with a different body is a 409. Keys are per credential. */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateSignalDto'];
      };
    };
    responses: {
      /** @description The new signal. */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'Idempotent-Replayed': components['headers']['Idempotent-Replayed'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SignalDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The Idempotency-Key was used with a different request, or that request is still running (`conflict`). */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 409,
           *       "title": "Conflict",
           *       "code": "conflict",
           *       "detail": "The request conflicts with the current state of the resource.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  signals_retrieve: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The signal. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SignalDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  signals_destroy: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Deleted. */
      204: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  signals_partial_update: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UpdateSignalDto'];
      };
    };
    responses: {
      /** @description The signal as it is now. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SignalDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  ai_model_instances_list: {
    parameters: {
      query?: {
        /** @description Only this status. */
        status?: 'pending' | 'training' | 'ready' | 'failed' | 'archived';
        /** @description Only this model type. */
        model_type?: 'propensity' | 'lifetime_value' | 'churn' | 'lookalike';
        /** @description Name contains this text, ignoring letter case. */
        search?: string;
        /** @description 1-based page number. Past the end, 0 or not a number → 404 `Invalid page.` */
        page?: number;
        /** @description Items per page; values above 100 are clamped to 100. */
        page_size?: number;
        /** @description Sort field, `-` for descending. Default `-id` (newest first). */
        ordering?: 'id' | '-id' | 'name' | '-name' | 'created_at' | '-created_at' | 'updated_at' | '-updated_at' | 'status' | '-status';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of results. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /**
             * Format: int64
             * @description Total number of items over all pages.
             * @example 57
             */
            count: number;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=3&status=1
             */
            next: string | null;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=1&status=1
             */
            previous: string | null;
            results: components['schemas']['AiModelInstanceDto'][];
          };
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  ai_model_instances_create: {
    parameters: {
      query?: never;
      header?: {
        /** @description Any unique string of 1–255 characters. A retry with the same key and the same body within 24 hours returns the first response (with `Idempotent-Replayed: true`) and creates nothing; the same key with a different body is a 409. Keys are per credential. */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateAiModelInstanceDto'];
      };
    };
    responses: {
      /** @description The new model instance. */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'Idempotent-Replayed': components['headers']['Idempotent-Replayed'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AiModelInstanceDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The Idempotency-Key was used with a different request, or that request is still running (`conflict`). */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 409,
           *       "title": "Conflict",
           *       "code": "conflict",
           *       "detail": "The request conflicts with the current state of the resource.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  ai_model_instances_retrieve: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The model instance. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AiModelInstanceDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  ai_model_instances_destroy: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Deleted. */
      204: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Conflicts with the current state (`conflict`). */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 409,
           *       "title": "Conflict",
           *       "code": "conflict",
           *       "detail": "The request conflicts with the current state of the resource.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  ai_model_instances_partial_update: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UpdateAiModelInstanceDto'];
      };
    };
    responses: {
      /** @description The model instance as it is now. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AiModelInstanceDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  connections_list: {
    parameters: {
      query?: {
        /** @description Workspace id; any other than yours gives an empty page. */
        customer?: number;
        /** @description Only this ad platform. */
        platform?: 'google_ads' | 'meta_ads';
        /** @description Only this status. */
        status?: 'active' | 'expired' | 'revoked' | 'error';
        /** @description Account name contains this text, ignoring letter case. */
        search?: string;
        /** @description 1-based page number. Past the end, 0 or not a number → 404 `Invalid page.` */
        page?: number;
        /** @description Items per page; values above 100 are clamped to 100. */
        page_size?: number;
        /** @description Sort field, `-` for descending. Default `-id` (newest first). */
        ordering?: 'id' | '-id' | 'name' | '-name' | 'created_at' | '-created_at' | 'updated_at' | '-updated_at' | 'status' | '-status';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of results. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /**
             * Format: int64
             * @description Total number of items over all pages.
             * @example 57
             */
            count: number;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=3&status=1
             */
            next: string | null;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=1&status=1
             */
            previous: string | null;
            results: components['schemas']['ConnectionDto'][];
          };
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  connections_retrieve: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The connection. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ConnectionDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  connections_destroy: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Deleted. */
      204: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  connections_partial_update: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UpdateConnectionDto'];
      };
    };
    responses: {
      /** @description The connection as it is now. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ConnectionDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write, or anyone but an admin changing `customer_match_terms_accepted` (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  connection_flow_start: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The ad platform; one whose OAuth app is not configured answers 404. */
        platform: 'google-ads' | 'meta-ads';
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': components['schemas']['StartConnectionFlowDto'];
      };
    };
    responses: {
      /** @description Where to send the browser. */
      200: {
        headers: {
          /** @description `connection_flow`: an opaque id of this browser's connection flows, which the callback checks; HttpOnly, SameSite=Lax, Path=/oauth/connections/, 10 minutes (Secure over https). */
          'Set-Cookie'?: string;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ConnectionFlowStartedDto'];
        };
      };
      /** @description `return_to` is not a path of the web interface (`validation_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "return_to": [
           *           "Must be a path of the web interface, such as /app/connections."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Missing credentials (`not_authenticated`) or a bad one (`authentication_failed`, `token_not_valid`). */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /**
       * @description A viewer, or an API key (`permission_denied`).
       *
       *     Authenticated, but not allowed to do this (`permission_denied`).
       */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unknown platform, or its OAuth app is not configured (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  connection_flow_callback: {
    parameters: {
      query?: {
        /** @description Sent by the provider when consent was refused. */
        error?: string;
        state?: string;
        code?: string;
      };
      header?: never;
      path: {
        /** @description The ad platform; one whose OAuth app is not configured answers 404. */
        platform: 'google-ads' | 'meta-ads';
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description To the web interface, with the outcome in the query. */
      302: {
        headers: {
          /** @description e.g. `https://api.example.com/app/connections?platform=google_ads&connected=2` */
          Location?: string;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unknown platform (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Too many requests (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  people_list: {
    parameters: {
      query?: {
        /** @description The person with exactly this external_id (at most one). */
        external_id?: string;
        /** @description Only the members of this audience. */
        audience?: number;
        /** @description 1-based page number. Past the end, 0 or not a number → 404 `Invalid page.` */
        page?: number;
        /** @description Items per page; values above 100 are clamped to 100. */
        page_size?: number;
        /** @description Sort field, `-` for descending. Default `-id` (newest first). */
        ordering?: 'id' | '-id' | 'external_id' | '-external_id' | 'created_at' | '-created_at' | 'updated_at' | '-updated_at';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of results. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /**
             * Format: int64
             * @description Total number of items over all pages.
             * @example 57
             */
            count: number;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=3&status=1
             */
            next: string | null;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=1&status=1
             */
            previous: string | null;
            results: components['schemas']['PersonDto'][];
          };
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  people_batch: {
    parameters: {
      query?: never;
      header?: {
        /** @description Any unique string of 1–255 characters. A retry with the same key and the same body within 24 hours returns the first response (with `Idempotent-Replayed: true`) and creates nothing; the same key with a different body is a 409. Keys are per credential. */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['BatchPeopleDto'];
      };
    };
    responses: {
      /** @description How many people were created and updated, and the rows rejected. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'Idempotent-Replayed': components['headers']['Idempotent-Replayed'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['BatchResultDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The Idempotency-Key was used with a different request, or that request is still running (`conflict`). */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 409,
           *       "title": "Conflict",
           *       "code": "conflict",
           *       "detail": "The request conflicts with the current state of the resource.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  people_retrieve: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The person. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PersonDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  people_destroy: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Erased. */
      204: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  people_partial_update: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UpdatePersonDto'];
      };
    };
    responses: {
      /** @description The person as it is now. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PersonDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  imports_list: {
    parameters: {
      query?: {
        /** @description 1-based page number. Past the end, 0 or not a number → 404 `Invalid page.` */
        page?: number;
        /** @description Items per page; values above 100 are clamped to 100. */
        page_size?: number;
        /** @description Sort field, `-` for descending. Default `-id` (newest first). */
        ordering?: 'id' | '-id' | 'created_at' | '-created_at' | 'status' | '-status';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of results. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /**
             * Format: int64
             * @description Total number of items over all pages.
             * @example 57
             */
            count: number;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=3&status=1
             */
            next: string | null;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=1&status=1
             */
            previous: string | null;
            results: components['schemas']['ImportDto'][];
          };
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  imports_create: {
    parameters: {
      query: {
        /** @description For `target=audience` (required with it): `add` the file’s people, `remove` them, or `replace` the members with them (atomically: members not in the file leave in the same transaction as the new ones arrive). */
        mode?: 'add' | 'remove' | 'replace';
        /** @description The upload audience, for `target=audience` (required with it, refused without it). */
        audience?: number;
        /** @description What the file imports: `people`, or `audience`: the members of the upload audience `audience`, by `mode` (the file’s people are upserted first, except for `remove`). */
        target: 'people' | 'audience';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** @description The file, up to IMPORT_MAX_BYTES (default 1 GiB). */
    requestBody: {
      content: {
        'text/csv': string;
        'application/x-ndjson': string;
      };
    };
    responses: {
      /** @description The import: `queued`, or `failed` when the file was refused whole. */
      202: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ImportDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Conflicts with the current state (`conflict`). */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 409,
           *       "title": "Conflict",
           *       "code": "conflict",
           *       "detail": "The request conflicts with the current state of the resource.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  imports_retrieve: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The import. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ImportDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  audience_members_list: {
    parameters: {
      query?: {
        /** @description 1-based page number. Past the end, 0 or not a number → 404 `Invalid page.` */
        page?: number;
        /** @description Items per page; values above 100 are clamped to 100. */
        page_size?: number;
        /** @description Sort field, `-` for descending. Default `-id` (newest first). */
        ordering?: 'id' | '-id' | 'external_id' | '-external_id' | 'created_at' | '-created_at' | 'updated_at' | '-updated_at';
      };
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of results. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /**
             * Format: int64
             * @description Total number of items over all pages.
             * @example 57
             */
            count: number;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=3&status=1
             */
            next: string | null;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=1&status=1
             */
            previous: string | null;
            results: components['schemas']['PersonDto'][];
          };
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  audience_members_change: {
    parameters: {
      query?: never;
      header?: {
        /** @description Any unique string of 1–255 characters. A retry with the same key and the same body within 24 hours returns the first response (with `Idempotent-Replayed: true`) and creates nothing; the same key with a different body is a 409. Keys are per credential. */
        'Idempotency-Key'?: string;
      };
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ChangeMembersDto'];
      };
    };
    responses: {
      /** @description How many people joined and left, and the rows rejected. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'Idempotent-Replayed': components['headers']['Idempotent-Replayed'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MembersChangedDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /**
       * @description Conflicts with the current state (`conflict`).
       *
       *     The Idempotency-Key was used with a different request, or that request is still running (`conflict`).
       */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 409,
           *       "title": "Conflict",
           *       "code": "conflict",
           *       "detail": "The request conflicts with the current state of the resource.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  model_scores_write: {
    parameters: {
      query?: never;
      header?: {
        /** @description Any unique string of 1–255 characters. A retry with the same key and the same body within 24 hours returns the first response (with `Idempotent-Replayed: true`) and creates nothing; the same key with a different body is a 409. Keys are per credential. */
        'Idempotency-Key'?: string;
      };
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['WriteScoresDto'];
      };
    };
    responses: {
      /** @description How many scores were stored, and the external ids that name nobody. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'Idempotent-Replayed': components['headers']['Idempotent-Replayed'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScoresWrittenDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /**
       * @description Conflicts with the current state (`conflict`).
       *
       *     The Idempotency-Key was used with a different request, or that request is still running (`conflict`).
       */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 409,
           *       "title": "Conflict",
           *       "code": "conflict",
           *       "detail": "The request conflicts with the current state of the resource.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  syncs_list: {
    parameters: {
      query?: {
        /** @description Only runs of this audience. */
        audience?: number;
        /** @description Only runs to this connection. */
        connection?: number;
        /** @description Only runs in this status. */
        status?: 'queued' | 'running' | 'awaiting_platform' | 'succeeded' | 'partially_failed' | 'failed' | 'cancelled';
        /** @description 1-based page number. Past the end, 0 or not a number → 404 `Invalid page.` */
        page?: number;
        /** @description Items per page; values above 100 are clamped to 100. */
        page_size?: number;
        /** @description Sort field, `-` for descending. Default `-id` (newest first). */
        ordering?: 'id' | '-id' | 'created_at' | '-created_at' | 'status' | '-status';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of results. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /**
             * Format: int64
             * @description Total number of items over all pages.
             * @example 57
             */
            count: number;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=3&status=1
             */
            next: string | null;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=1&status=1
             */
            previous: string | null;
            results: components['schemas']['SyncRunDto'][];
          };
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  syncs_start: {
    parameters: {
      query?: never;
      header?: {
        /** @description Any unique string of 1–255 characters. A retry with the same key and the same body within 24 hours returns the first response (with `Idempotent-Replayed: true`) and creates nothing; the same key with a different body is a 409. Keys are per credential. */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateSyncDto'];
      };
    };
    responses: {
      /** @description The runs, one per destination. */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'Idempotent-Replayed': components['headers']['Idempotent-Replayed'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SyncRunsDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /**
       * @description Conflicts with the current state (`conflict`).
       *
       *     The Idempotency-Key was used with a different request, or that request is still running (`conflict`).
       */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 409,
           *       "title": "Conflict",
           *       "code": "conflict",
           *       "detail": "The request conflicts with the current state of the resource.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  syncs_retrieve: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The run. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SyncRunDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  syncs_cancel: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The cancelled run. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SyncRunDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Conflicts with the current state (`conflict`). */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 409,
           *       "title": "Conflict",
           *       "code": "conflict",
           *       "detail": "The request conflicts with the current state of the resource.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  signal_events_list: {
    parameters: {
      query?: {
        /** @description Only events in this delivery state. */
        status?: 'pending' | 'delivered' | 'failed' | 'held' | 'expired';
        /** @description 1-based page number. Past the end, 0 or not a number → 404 `Invalid page.` */
        page?: number;
        /** @description Items per page; values above 100 are clamped to 100. */
        page_size?: number;
        /** @description Sort field, `-` for descending. Default `-id` (newest first). */
        ordering?: 'id' | '-id' | 'event_time' | '-event_time' | 'received_at' | '-received_at';
      };
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of results. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /**
             * Format: int64
             * @description Total number of items over all pages.
             * @example 57
             */
            count: number;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=3&status=1
             */
            next: string | null;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=1&status=1
             */
            previous: string | null;
            results: components['schemas']['SignalEventDto'][];
          };
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  signal_events_accept: {
    parameters: {
      query?: never;
      header?: {
        /** @description Any unique string of 1–255 characters. A retry with the same key and the same body within 24 hours returns the first response (with `Idempotent-Replayed: true`) and creates nothing; the same key with a different body is a 409. Keys are per credential. */
        'Idempotency-Key'?: string;
      };
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['SignalEventsBatchDto'];
      };
    };
    responses: {
      /** @description How many events were accepted and repeated, and the events rejected. */
      202: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'Idempotent-Replayed': components['headers']['Idempotent-Replayed'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['EventsAcceptedDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A viewer or a read-only API key trying to write (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /**
       * @description Conflicts with the current state (`conflict`).
       *
       *     The Idempotency-Key was used with a different request, or that request is still running (`conflict`).
       */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 409,
           *       "title": "Conflict",
           *       "code": "conflict",
           *       "detail": "The request conflicts with the current state of the resource.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  webhooks_list: {
    parameters: {
      query?: {
        /** @description 1-based page number. Past the end, 0 or not a number → 404 `Invalid page.` */
        page?: number;
        /** @description Items per page; values above 100 are clamped to 100. */
        page_size?: number;
        /** @description Sort field, `-` for descending. Default `-id` (newest first). */
        ordering?: 'id' | '-id' | 'created_at' | '-created_at' | 'updated_at' | '-updated_at';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of results. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /**
             * Format: int64
             * @description Total number of items over all pages.
             * @example 57
             */
            count: number;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=3&status=1
             */
            next: string | null;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=1&status=1
             */
            previous: string | null;
            results: components['schemas']['WebhookDto'][];
          };
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A write by anyone but an admin or a write-scoped API key: an editor, a viewer or a read-only key (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  webhooks_create: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateWebhookDto'];
      };
    };
    responses: {
      /** @description The new webhook, with its secret (shown this once). */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CreatedWebhookDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A write by anyone but an admin or a write-scoped API key: an editor, a viewer or a read-only key (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  webhooks_retrieve: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The webhook. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A write by anyone but an admin or a write-scoped API key: an editor, a viewer or a read-only key (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  webhooks_destroy: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Deleted. */
      204: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A write by anyone but an admin or a write-scoped API key: an editor, a viewer or a read-only key (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  webhooks_partial_update: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UpdateWebhookDto'];
      };
    };
    responses: {
      /** @description The webhook as it is now. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A write by anyone but an admin or a write-scoped API key: an editor, a viewer or a read-only key (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  webhooks_rotate_secret: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The new secret (shown this once) and the end of the overlap. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookSecretDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A write by anyone but an admin or a write-scoped API key: an editor, a viewer or a read-only key (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  webhooks_send_test: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The queued delivery. */
      202: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookDeliveryDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A write by anyone but an admin or a write-scoped API key: an editor, a viewer or a read-only key (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  webhooks_list_deliveries: {
    parameters: {
      query?: {
        /** @description Only deliveries with this status. */
        status?: 'pending' | 'succeeded' | 'failed';
        /** @description 1-based page number. Past the end, 0 or not a number → 404 `Invalid page.` */
        page?: number;
        /** @description Items per page; values above 100 are clamped to 100. */
        page_size?: number;
        /** @description Sort field, `-` for descending. Default `-id` (newest first). */
        ordering?: 'id' | '-id' | 'created_at' | '-created_at';
      };
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of results. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /**
             * Format: int64
             * @description Total number of items over all pages.
             * @example 57
             */
            count: number;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=3&status=1
             */
            next: string | null;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=1&status=1
             */
            previous: string | null;
            results: components['schemas']['WebhookDeliveryDto'][];
          };
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description A write by anyone but an admin or a write-scoped API key: an editor, a viewer or a read-only key (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  web_session_configuration: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The sign-in and connect options of this server. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebConfigDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Too many requests (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  web_session_sign_in: {
    parameters: {
      query?: never;
      header: {
        /** @description Any value. A cross-site form cannot send it, so a page of another site cannot drive these calls. */
        'X-Requested-With': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['TokenObtainDto'];
      };
    };
    responses: {
      /** @description Signed in; the session cookie is set. */
      200: {
        headers: {
          /** @description `audience_session`: the refresh token, HttpOnly, SameSite=Strict, Path=/app/session/ (Secure over https). */
          'Set-Cookie'?: string;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebSessionDto'];
        };
      };
      /** @description Missing or blank `email` or `password` (`validation_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "email": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Wrong email or password, or an inactive user (`authentication_failed`). */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "authentication_failed",
           *       "detail": "No active account found with the given credentials.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No `X-Requested-With` header, or `Sec-Fetch-Site` names another site (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Session calls must carry an X-Requested-With header.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Too many requests (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  web_session_refresh: {
    parameters: {
      query?: never;
      header: {
        /** @description Any value. A cross-site form cannot send it, so a page of another site cannot drive these calls. */
        'X-Requested-With': string;
      };
      path?: never;
      cookie?: never;
    };
    /** @description No body. */
    requestBody?: {
      content: {
        'application/json': Record<string, never>;
      };
    };
    responses: {
      /** @description A new access token; the cookie holds the next refresh token. */
      200: {
        headers: {
          /** @description `audience_session`: the refresh token, HttpOnly, SameSite=Strict, Path=/app/session/ (Secure over https). */
          'Set-Cookie'?: string;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebSessionDto'];
        };
      };
      /** @description A body was sent and it is not valid JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No session cookie (`not_authenticated`), or its token is spent, expired or ended (`token_not_valid`); the cookie is cleared. */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "token_not_valid",
           *       "detail": "Token is invalid or expired.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No `X-Requested-With` header, or `Sec-Fetch-Site` names another site (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Session calls must carry an X-Requested-With header.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Too many requests (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  web_session_logout: {
    parameters: {
      query?: never;
      header: {
        /** @description Any value. A cross-site form cannot send it, so a page of another site cannot drive these calls. */
        'X-Requested-With': string;
      };
      path?: never;
      cookie?: never;
    };
    /** @description No body. */
    requestBody?: {
      content: {
        'application/json': Record<string, never>;
      };
    };
    responses: {
      /** @description Signed out; the cookie is cleared. */
      204: {
        headers: {
          /** @description `audience_session`: the refresh token, HttpOnly, SameSite=Strict, Path=/app/session/ (Secure over https). */
          'Set-Cookie'?: string;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description A body was sent and it is not valid JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No `X-Requested-With` header, or `Sec-Fetch-Site` names another site (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Session calls must carry an X-Requested-With header.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Too many requests (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  web_session_social_sign_in: {
    parameters: {
      query?: never;
      header: {
        /** @description Any value. A cross-site form cannot send it, so a page of another site cannot drive these calls. */
        'X-Requested-With': string;
      };
      path: {
        /** @description A configured provider; one that is not configured answers 404. */
        provider: 'google-oauth2' | 'facebook';
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['SocialLoginDto'];
      };
    };
    responses: {
      /** @description Signed in (or linked); the session cookie is set. */
      200: {
        headers: {
          /** @description `audience_session`: the refresh token, HttpOnly, SameSite=Strict, Path=/app/session/ (Secure over https). */
          'Set-Cookie'?: string;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebSessionDto'];
        };
      };
      /** @description Unknown, used or expired `state`, a wrong `iss`, or a refused code (`validation_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "state": [
           *           "Unknown or already used state; start the login again."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No active user for this identity, or an ID token that failed verification (`authentication_failed`). */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "authentication_failed",
           *       "detail": "No active account found with the given credentials.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No `X-Requested-With` header, or `Sec-Fetch-Site` names another site (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Session calls must carry an X-Requested-With header.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The provider is unknown or not configured (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "No social login provider \"github\" is configured.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Linking: this provider account is already linked to another user (`conflict`). */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 409,
           *       "title": "Conflict",
           *       "code": "conflict",
           *       "detail": "This Google account is already linked to another user.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Too many requests (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The provider could not be reached (`service_unavailable`, `Retry-After`). */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "Google could not be reached. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  mcp_tokens_list: {
    parameters: {
      query?: {
        /** @description 1-based page number. Past the end, 0 or not a number → 404 `Invalid page.` */
        page?: number;
        /** @description Items per page; values above 100 are clamped to 100. */
        page_size?: number;
        /** @description Sort field, `-` for descending. Default `-id` (newest first). */
        ordering?: 'id' | '-id' | 'name' | '-name' | 'created_at' | '-created_at';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of results. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /**
             * Format: int64
             * @description Total number of items over all pages.
             * @example 57
             */
            count: number;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=3&status=1
             */
            next: string | null;
            /**
             * Format: uri
             * @example https://api.example.com/api/v1/signals/?page=1&status=1
             */
            previous: string | null;
            results: components['schemas']['McpTokenDto'][];
          };
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Missing credentials (`not_authenticated`) or a bad one (`authentication_failed`, `token_not_valid`). */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Authenticated, but not allowed to do this (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  mcp_tokens_create: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateMcpTokenDto'];
      };
    };
    responses: {
      /** @description The new token, with its secret (shown this once). */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CreatedMcpTokenDto'];
        };
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Missing credentials (`not_authenticated`) or a bad one (`authentication_failed`, `token_not_valid`). */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Authenticated, but not allowed to do this (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description You already hold the most usable tokens allowed (MCP_TOKENS_PER_USER, 25 by default): revoke one first. */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 409,
           *       "title": "Conflict",
           *       "code": "conflict",
           *       "detail": "The request conflicts with the current state of the resource.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body over 1 MiB (`payload_too_large`). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 413,
           *       "title": "Payload Too Large",
           *       "code": "payload_too_large",
           *       "detail": "The request body is larger than 1 MiB.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Request body is not JSON (`unsupported_media_type`). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 415,
           *       "title": "Unsupported Media Type",
           *       "code": "unsupported_media_type",
           *       "detail": "Unsupported media type \"text/plain\"; send application/json.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
  mcp_tokens_destroy: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Revoked. */
      204: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 400,
           *       "title": "Bad Request",
           *       "code": "validation_error",
           *       "detail": "Some fields are invalid.",
           *       "errors": {
           *         "name": [
           *           "This field is required."
           *         ]
           *       },
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Missing credentials (`not_authenticated`) or a bad one (`authentication_failed`, `token_not_valid`). */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 401,
           *       "title": "Unauthorized",
           *       "code": "not_authenticated",
           *       "detail": "Authentication credentials were not provided.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Authenticated, but not allowed to do this (`permission_denied`). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 403,
           *       "title": "Forbidden",
           *       "code": "permission_denied",
           *       "detail": "Viewers can only read.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description No such object in your workspace (`not_found`). */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 404,
           *       "title": "Not Found",
           *       "code": "not_found",
           *       "detail": "Not found.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds. */
      429: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 429,
           *       "title": "Too Many Requests",
           *       "code": "throttled",
           *       "detail": "Request limit of 600 per minute reached. Try again in 12 seconds.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description Unexpected error (`internal_error`); quote the request id. */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 500,
           *       "title": "Internal Server Error",
           *       "code": "internal_error",
           *       "detail": "An internal error occurred. Quote the request id when you report it.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
      /** @description The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). Retry later: after `Retry-After` seconds when it is given. */
      503: {
        headers: {
          /** @description Seconds to wait before trying again (at most a day; in practice seconds to minutes). */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Access-Control-Allow-Origin': components['headers']['Access-Control-Allow-Origin'];
          RateLimit: components['headers']['RateLimit'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "type": "about:blank",
           *       "status": 503,
           *       "title": "Service Unavailable",
           *       "code": "service_unavailable",
           *       "detail": "The database is temporarily unavailable. Try again shortly.",
           *       "request_id": "9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10"
           *     }
           */
          'application/problem+json': components['schemas']['ProblemDetailsDto'];
        };
      };
    };
  };
}
type FlattenedDeepRequired<T> = {
  [K in keyof T]-?: FlattenedDeepRequired<T[K] extends unknown[] | undefined | null ? Extract<T[K], unknown[]>[number] : NonNullable<T[K]>>;
};
type ReadonlyArray<T> = [Exclude<T, undefined>] extends [unknown[]] ? Readonly<Exclude<T, undefined>> : Readonly<Exclude<T, undefined>[]>;
export const pathsApiV1AuthOProviderGetParametersPathProviderValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/auth/o/{provider}/']['get']['parameters']['path']['provider']
> = ['google-oauth2', 'facebook'];
export const pathsApiV1AuthOProviderPostParametersPathProviderValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/auth/o/{provider}/']['post']['parameters']['path']['provider']
> = ['google-oauth2', 'facebook'];
export const pathsApiV1AudiencesGetParametersQueryStatusValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/audiences/']['get']['parameters']['query']['status']
> = ['draft', 'active', 'archived'];
export const pathsApiV1AudiencesGetParametersQuerySource_typeValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/audiences/']['get']['parameters']['query']['source_type']
> = ['rules', 'model', 'upload'];
export const pathsApiV1AudiencesGetParametersQueryOrderingValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/audiences/']['get']['parameters']['query']['ordering']
> = ['id', '-id', 'name', '-name', 'created_at', '-created_at', 'updated_at', '-updated_at', 'status', '-status'];
export const pathsApiV1SignalsGetParametersQueryStatusValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/signals/']['get']['parameters']['query']['status']
> = [0, 1, 2, 3, 4];
export const pathsApiV1SignalsGetParametersQuerySignal_typeValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/signals/']['get']['parameters']['query']['signal_type']
> = ['conversion', 'value', 'score'];
export const pathsApiV1SignalsGetParametersQueryOrderingValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/signals/']['get']['parameters']['query']['ordering']
> = ['id', '-id', 'name', '-name', 'created_at', '-created_at', 'updated_at', '-updated_at', 'status', '-status'];
export const pathsApiV1AiModelInstancesGetParametersQueryStatusValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/ai-model-instances/']['get']['parameters']['query']['status']
> = ['pending', 'training', 'ready', 'failed', 'archived'];
export const pathsApiV1AiModelInstancesGetParametersQueryModel_typeValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/ai-model-instances/']['get']['parameters']['query']['model_type']
> = ['propensity', 'lifetime_value', 'churn', 'lookalike'];
export const pathsApiV1AiModelInstancesGetParametersQueryOrderingValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/ai-model-instances/']['get']['parameters']['query']['ordering']
> = ['id', '-id', 'name', '-name', 'created_at', '-created_at', 'updated_at', '-updated_at', 'status', '-status'];
export const pathsApiV1ConnectionsGetParametersQueryPlatformValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/connections/']['get']['parameters']['query']['platform']
> = ['google_ads', 'meta_ads'];
export const pathsApiV1ConnectionsGetParametersQueryStatusValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/connections/']['get']['parameters']['query']['status']
> = ['active', 'expired', 'revoked', 'error'];
export const pathsApiV1ConnectionsGetParametersQueryOrderingValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/connections/']['get']['parameters']['query']['ordering']
> = ['id', '-id', 'name', '-name', 'created_at', '-created_at', 'updated_at', '-updated_at', 'status', '-status'];
export const pathsOauthConnectionsPlatformStartPostParametersPathPlatformValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/oauth/connections/{platform}/start']['post']['parameters']['path']['platform']
> = ['google-ads', 'meta-ads'];
export const pathsOauthConnectionsPlatformCallbackGetParametersPathPlatformValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/oauth/connections/{platform}/callback']['get']['parameters']['path']['platform']
> = ['google-ads', 'meta-ads'];
export const pathsApiV1PeopleGetParametersQueryOrderingValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/people/']['get']['parameters']['query']['ordering']
> = ['id', '-id', 'external_id', '-external_id', 'created_at', '-created_at', 'updated_at', '-updated_at'];
export const pathsApiV1ImportsGetParametersQueryOrderingValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/imports/']['get']['parameters']['query']['ordering']
> = ['id', '-id', 'created_at', '-created_at', 'status', '-status'];
export const pathsApiV1ImportsPostParametersQueryModeValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/imports/']['post']['parameters']['query']['mode']
> = ['add', 'remove', 'replace'];
export const pathsApiV1ImportsPostParametersQueryTargetValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/imports/']['post']['parameters']['query']['target']
> = ['people', 'audience'];
export const pathsApiV1AudiencesIdMembersGetParametersQueryOrderingValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/audiences/{id}/members/']['get']['parameters']['query']['ordering']
> = ['id', '-id', 'external_id', '-external_id', 'created_at', '-created_at', 'updated_at', '-updated_at'];
export const pathsApiV1SyncsGetParametersQueryStatusValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/syncs/']['get']['parameters']['query']['status']
> = ['queued', 'running', 'awaiting_platform', 'succeeded', 'partially_failed', 'failed', 'cancelled'];
export const pathsApiV1SyncsGetParametersQueryOrderingValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/syncs/']['get']['parameters']['query']['ordering']
> = ['id', '-id', 'created_at', '-created_at', 'status', '-status'];
export const pathsApiV1SignalsIdEventsGetParametersQueryStatusValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/signals/{id}/events/']['get']['parameters']['query']['status']
> = ['pending', 'delivered', 'failed', 'held', 'expired'];
export const pathsApiV1SignalsIdEventsGetParametersQueryOrderingValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/signals/{id}/events/']['get']['parameters']['query']['ordering']
> = ['id', '-id', 'event_time', '-event_time', 'received_at', '-received_at'];
export const pathsApiV1WebhooksGetParametersQueryOrderingValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/webhooks/']['get']['parameters']['query']['ordering']
> = ['id', '-id', 'created_at', '-created_at', 'updated_at', '-updated_at'];
export const pathsApiV1WebhooksIdDeliveriesGetParametersQueryStatusValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/webhooks/{id}/deliveries/']['get']['parameters']['query']['status']
> = ['pending', 'succeeded', 'failed'];
export const pathsApiV1WebhooksIdDeliveriesGetParametersQueryOrderingValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/webhooks/{id}/deliveries/']['get']['parameters']['query']['ordering']
> = ['id', '-id', 'created_at', '-created_at'];
export const pathsAppSessionSocialProviderPostParametersPathProviderValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/app/session/social/{provider}']['post']['parameters']['path']['provider']
> = ['google-oauth2', 'facebook'];
export const pathsApiV1McpTokensGetParametersQueryOrderingValues: ReadonlyArray<
  FlattenedDeepRequired<paths>['/api/v1/mcp-tokens/']['get']['parameters']['query']['ordering']
> = ['id', '-id', 'name', '-name', 'created_at', '-created_at'];
export const currentUserDtoRoleValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['CurrentUserDto']['role']> = [
  'admin',
  'editor',
  'viewer',
];
export const audienceDtoSource_typeValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['AudienceDto']['source_type']> = [
  'rules',
  'model',
  'upload',
];
export const audienceDtoStatusValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['AudienceDto']['status']> = [
  'draft',
  'active',
  'archived',
];
export const createAudienceDtoSource_typeValues: ReadonlyArray<
  FlattenedDeepRequired<components>['schemas']['CreateAudienceDto']['source_type']
> = ['rules', 'model', 'upload'];
export const createAudienceDtoStatusValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['CreateAudienceDto']['status']> = [
  'draft',
  'active',
  'archived',
];
export const audienceDestinationDtoPlatformValues: ReadonlyArray<
  FlattenedDeepRequired<components>['schemas']['AudienceDestinationDto']['platform']
> = ['google_ads', 'meta_ads'];
export const audienceDestinationDtoLast_runStatusValues: ReadonlyArray<
  FlattenedDeepRequired<components>['schemas']['AudienceDestinationDto']['last_run']['status']
> = ['queued', 'running', 'awaiting_platform', 'succeeded', 'partially_failed', 'failed', 'cancelled'];
export const audienceDetailDtoSource_typeValues: ReadonlyArray<
  FlattenedDeepRequired<components>['schemas']['AudienceDetailDto']['source_type']
> = ['rules', 'model', 'upload'];
export const audienceDetailDtoStatusValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['AudienceDetailDto']['status']> = [
  'draft',
  'active',
  'archived',
];
export const updateAudienceDtoSource_typeValues: ReadonlyArray<
  FlattenedDeepRequired<components>['schemas']['UpdateAudienceDto']['source_type']
> = ['rules', 'model', 'upload'];
export const updateAudienceDtoStatusValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['UpdateAudienceDto']['status']> = [
  'draft',
  'active',
  'archived',
];
export const signalDtoSignal_typeValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['SignalDto']['signal_type']> = [
  'conversion',
  'value',
  'score',
];
export const signalDtoStatusValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['SignalDto']['status']> = [0, 1, 2, 3, 4];
export const createSignalDtoSignal_typeValues: ReadonlyArray<
  FlattenedDeepRequired<components>['schemas']['CreateSignalDto']['signal_type']
> = ['conversion', 'value', 'score'];
export const createSignalDtoStatusValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['CreateSignalDto']['status']> = [
  0, 1, 2, 3, 4,
];
export const updateSignalDtoSignal_typeValues: ReadonlyArray<
  FlattenedDeepRequired<components>['schemas']['UpdateSignalDto']['signal_type']
> = ['conversion', 'value', 'score'];
export const updateSignalDtoStatusValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['UpdateSignalDto']['status']> = [
  0, 1, 2, 3, 4,
];
export const aiModelInstanceDtoModel_typeValues: ReadonlyArray<
  FlattenedDeepRequired<components>['schemas']['AiModelInstanceDto']['model_type']
> = ['propensity', 'lifetime_value', 'churn', 'lookalike'];
export const aiModelInstanceDtoStatusValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['AiModelInstanceDto']['status']> = [
  'pending',
  'training',
  'ready',
  'failed',
  'archived',
];
export const createAiModelInstanceDtoModel_typeValues: ReadonlyArray<
  FlattenedDeepRequired<components>['schemas']['CreateAiModelInstanceDto']['model_type']
> = ['propensity', 'lifetime_value', 'churn', 'lookalike'];
export const createAiModelInstanceDtoStatusValues: ReadonlyArray<
  FlattenedDeepRequired<components>['schemas']['CreateAiModelInstanceDto']['status']
> = ['pending', 'training', 'ready', 'failed', 'archived'];
export const updateAiModelInstanceDtoModel_typeValues: ReadonlyArray<
  FlattenedDeepRequired<components>['schemas']['UpdateAiModelInstanceDto']['model_type']
> = ['propensity', 'lifetime_value', 'churn', 'lookalike'];
export const updateAiModelInstanceDtoStatusValues: ReadonlyArray<
  FlattenedDeepRequired<components>['schemas']['UpdateAiModelInstanceDto']['status']
> = ['pending', 'training', 'ready', 'failed', 'archived'];
export const connectionDtoPlatformValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['ConnectionDto']['platform']> = [
  'google_ads',
  'meta_ads',
];
export const connectionDtoStatusValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['ConnectionDto']['status']> = [
  'active',
  'expired',
  'revoked',
  'error',
];
export const consentDtoAd_user_dataValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['ConsentDto']['ad_user_data']> = [
  'granted',
  'denied',
  'unspecified',
];
export const consentDtoAd_personalizationValues: ReadonlyArray<
  FlattenedDeepRequired<components>['schemas']['ConsentDto']['ad_personalization']
> = ['granted', 'denied', 'unspecified'];
export const personDtoMatched_keysValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['PersonDto']['matched_keys']> = [
  'email',
  'phone',
  'address',
  'mobile_ad_id',
];
export const importDtoTargetValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['ImportDto']['target']> = [
  'people',
  'audience',
];
export const importDtoStatusValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['ImportDto']['status']> = [
  'queued',
  'processing',
  'succeeded',
  'failed',
];
export const changeMembersDtoActionValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['ChangeMembersDto']['action']> = [
  'add',
  'remove',
];
export const syncRunDtoTriggerValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['SyncRunDto']['trigger']> = [
  'manual',
  'membership_change',
  'schedule',
];
export const syncRunDtoStatusValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['SyncRunDto']['status']> = [
  'queued',
  'running',
  'awaiting_platform',
  'succeeded',
  'partially_failed',
  'failed',
  'cancelled',
];
export const signalEventDtoStatusValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['SignalEventDto']['status']> = [
  'pending',
  'delivered',
  'failed',
  'held',
  'expired',
];
export const webhookDtoEventsValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['WebhookDto']['events']> = [
  'sync.succeeded',
  'sync.failed',
  'connection.reauthorization_required',
  'signal.failed',
  'import.finished',
];
export const createWebhookDtoEventsValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['CreateWebhookDto']['events']> = [
  'sync.succeeded',
  'sync.failed',
  'connection.reauthorization_required',
  'signal.failed',
  'import.finished',
];
export const createdWebhookDtoEventsValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['CreatedWebhookDto']['events']> = [
  'sync.succeeded',
  'sync.failed',
  'connection.reauthorization_required',
  'signal.failed',
  'import.finished',
];
export const updateWebhookDtoEventsValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['UpdateWebhookDto']['events']> = [
  'sync.succeeded',
  'sync.failed',
  'connection.reauthorization_required',
  'signal.failed',
  'import.finished',
];
export const webhookDeliveryDtoEvent_typeValues: ReadonlyArray<
  FlattenedDeepRequired<components>['schemas']['WebhookDeliveryDto']['event_type']
> = ['sync.succeeded', 'sync.failed', 'connection.reauthorization_required', 'signal.failed', 'import.finished', 'webhook.test'];
export const webhookDeliveryDtoStatusValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['WebhookDeliveryDto']['status']> = [
  'pending',
  'succeeded',
  'failed',
];
export const webConfigDtoSocial_providersValues: ReadonlyArray<
  FlattenedDeepRequired<components>['schemas']['WebConfigDto']['social_providers']
> = ['google-oauth2', 'facebook'];
export const webConfigDtoAd_platformsValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['WebConfigDto']['ad_platforms']> = [
  'google-ads',
  'meta-ads',
];
export const problemDetailsDtoTypeValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['ProblemDetailsDto']['type']> = [
  'about:blank',
];
export const problemDetailsDtoCodeValues: ReadonlyArray<FlattenedDeepRequired<components>['schemas']['ProblemDetailsDto']['code']> = [
  'validation_error',
  'parse_error',
  'not_authenticated',
  'authentication_failed',
  'token_not_valid',
  'permission_denied',
  'not_found',
  'method_not_allowed',
  'conflict',
  'payload_too_large',
  'unsupported_media_type',
  'throttled',
  'internal_error',
  'service_unavailable',
];
export const componentsHeadersIdempotentReplayedValues: ReadonlyArray<FlattenedDeepRequired<components>['headers']['Idempotent-Replayed']> =
  ['true'];
