import { Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Connection } from '../connections/connection.entity.js';
import { Audience } from './audience.entity.js';

/**
 * An audience's destination connection. Both foreign keys are composite over the shared
 * customer_id, so a link across workspaces cannot exist in the database.
 */
@Entity({ name: 'audience_connections' })
@Index('audience_connections_customer_connection_idx', ['customerId', 'connectionId'])
export class AudienceConnection {
  @PrimaryColumn({ name: 'customer_id', type: 'bigint' })
  customerId: number;

  @PrimaryColumn({ name: 'audience_id', type: 'bigint' })
  audienceId: number;

  @PrimaryColumn({ name: 'connection_id', type: 'bigint' })
  connectionId: number;

  @ManyToOne(() => Audience, (audience) => audience.connectionLinks, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'audience_connections_audience_fkey' },
    { name: 'audience_id', referencedColumnName: 'id', foreignKeyConstraintName: 'audience_connections_audience_fkey' },
  ])
  audience?: Relation<Audience>;

  @ManyToOne(() => Connection, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'audience_connections_connection_fkey' },
    { name: 'connection_id', referencedColumnName: 'id', foreignKeyConstraintName: 'audience_connections_connection_fkey' },
  ])
  connection?: Relation<Connection>;
}
