import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Customer } from '../customers/customer.entity.js';

/**
 * A POST made with an `Idempotency-Key` (SPEC section 8): the key is claimed before the handler
 * runs and the response is kept for 24 hours, so a retry gets the first answer back.
 */
@Entity({ name: 'idempotency_keys' })
export class IdempotencyKey {
  @PrimaryColumn({ name: 'customer_id', type: 'bigint' })
  customerId: number;

  @ManyToOne(() => Customer, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'customer_id', foreignKeyConstraintName: 'idempotency_keys_customer_id_fkey' })
  customer?: Relation<Customer>;

  /** `user:<id>` or `api_key:<id>`: keys are per identity. */
  @PrimaryColumn({ type: 'varchar', length: 64 })
  identity: string;

  @PrimaryColumn({ type: 'varchar', length: 255 })
  key: string;

  /** SHA-256 of method, path and body: the same key with another request is a 409. */
  @Column({ name: 'request_hash', type: 'bytea' })
  requestHash: Buffer;

  /** Null while the first request is still running. */
  @Column({ name: 'status_code', type: 'integer', nullable: true })
  statusCode: number | null;

  @Column({ name: 'response_body', type: 'jsonb', nullable: true })
  responseBody: unknown;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
