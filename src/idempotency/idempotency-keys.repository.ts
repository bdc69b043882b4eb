import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Equal, type Repository } from 'typeorm';
import { IdempotencyKey } from './idempotency-key.entity.js';

/** Whose key it is: keys are per identity within a workspace (SPEC section 8). */
export interface IdempotencyKeyOwner {
  customerId: number;
  /** `user:<id>` or `api_key:<id>`. */
  identity: string;
  key: string;
}

/**
 * All SQL about idempotency keys. Not a TenantRepository: the interceptor runs before the
 * handler, outside the code that reads the tenant context, and names the workspace explicitly.
 */
@Injectable()
export class IdempotencyKeysRepository {
  constructor(@InjectRepository(IdempotencyKey) private readonly keys: Repository<IdempotencyKey>) {}

  /** Forgets this key if it was claimed longer ago than the retention period, so it can be claimed anew. */
  async deleteExpired(owner: IdempotencyKeyOwner, retentionHours: number): Promise<void> {
    await this.keys
      .createQueryBuilder()
      .delete()
      .where('customer_id = :customerId AND identity = :identity AND key = :key', ownerParameters(owner))
      .andWhere('created_at < now() - make_interval(hours => :retentionHours)', { retentionHours })
      .execute();
  }

  /**
   * Claims the key with one INSERT … ON CONFLICT DO NOTHING: of two concurrent requests with the
   * same key exactly one gets true. The response is filled in later by `complete`.
   */
  async claim(owner: IdempotencyKeyOwner, requestHash: Buffer): Promise<boolean> {
    const claimed = await this.keys
      .createQueryBuilder()
      .insert()
      .values({ ...ownerParameters(owner), requestHash })
      .orIgnore()
      .returning(['key'])
      .execute();
    return (claimed.raw as unknown[]).length > 0;
  }

  find(owner: IdempotencyKeyOwner): Promise<IdempotencyKey | null> {
    return this.keys.findOneBy({ customerId: Equal(owner.customerId), identity: Equal(owner.identity), key: Equal(owner.key) });
  }

  /** Stores the response a retry will get back. */
  async complete(owner: IdempotencyKeyOwner, statusCode: number, responseBody: unknown): Promise<void> {
    await this.keys.update(
      { customerId: Equal(owner.customerId), identity: Equal(owner.identity), key: Equal(owner.key) },
      { statusCode, responseBody: responseBody as object },
    );
  }

  /** Frees the key after a failed request, so a corrected retry can use it. */
  async release(owner: IdempotencyKeyOwner): Promise<void> {
    await this.keys.delete({ customerId: Equal(owner.customerId), identity: Equal(owner.identity), key: Equal(owner.key) });
  }
}

/** Exactly the three key columns, whatever else the caller's object carries. */
function ownerParameters({ customerId, identity, key }: IdempotencyKeyOwner): IdempotencyKeyOwner {
  return { customerId, identity, key };
}
