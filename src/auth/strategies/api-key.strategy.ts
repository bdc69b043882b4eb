import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { HeaderAPIKeyStrategy } from 'passport-headerapikey';
import { ApiKeysService } from '../../api-keys/api-keys.service.js';
import { ApiError } from '../../common/errors/api-error.js';
import type { Identity } from '../../common/access/identity.js';

export const API_KEY_CHALLENGE = 'Api-Key realm="api"';

/** `Authorization: Api-Key <prefix>.<secret>` (SPEC section 2). */
@Injectable()
export class ApiKeyStrategy extends PassportStrategy(HeaderAPIKeyStrategy, 'api-key') {
  constructor(private readonly apiKeys: ApiKeysService) {
    super({ header: 'Authorization', prefix: 'Api-Key ' }, false);
  }

  async validate(key: string): Promise<Identity> {
    const apiKey = await this.apiKeys.authenticate(key);
    if (!apiKey) throw new ApiError(401, 'authentication_failed', 'Invalid API key.', undefined, { 'www-authenticate': API_KEY_CHALLENGE });
    return { kind: 'api_key', apiKeyId: apiKey.id, customerId: apiKey.customerId, scope: apiKey.scope };
  }
}
