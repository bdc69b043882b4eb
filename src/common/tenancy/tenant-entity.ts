import { CreateDateColumn, PrimaryColumn, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/**
 * The columns every workspace resource has. The primary key is (customer_id, id): it leads with
 * the tenant, so every lookup and the default ordering use it, and the schema can later be
 * distributed by customer_id (Citus) without a rewrite. Ids still come from one sequence per
 * table and are unique on their own.
 */
export abstract class TenantEntity {
  @PrimaryColumn({ name: 'customer_id', type: 'bigint' })
  customerId: number;

  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
