import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { Customer } from '../customers/customer.entity.js';
import type { UserRole } from '../common/access/user-role.js';

@Entity({ name: 'users' })
@Check('users_role_check', `"role" IN ('admin', 'editor', 'viewer')`)
// Unique ignoring case: an expression index that TypeORM cannot describe, so the migration owns it.
@Index('users_email_lower_key', { synchronize: false })
export class User {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: number;

  @Index('users_customer_id_idx')
  @Column({ name: 'customer_id', type: 'bigint' })
  customerId: number;

  @ManyToOne(() => Customer, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'customer_id', foreignKeyConstraintName: 'users_customer_id_fkey' })
  customer?: Relation<Customer>;

  /** Kept as entered; uniqueness and look-ups go through lower(email). */
  @Column({ type: 'varchar', length: 254 })
  email: string;

  /** argon2id PHC string. Never leaves the service. */
  @Column({ name: 'password_hash', type: 'text' })
  passwordHash: string;

  @Column({ type: 'varchar', length: 16, default: 'viewer' })
  role: UserRole;

  @Column({ name: 'is_active', type: 'boolean', default: true })
  isActive: boolean;

  @CreateDateColumn({ name: 'date_joined', type: 'timestamptz' })
  dateJoined: Date;
}
