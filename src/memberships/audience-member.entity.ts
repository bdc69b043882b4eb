import { CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One person's membership of one audience (SPEC 10.2), written by the recompute (rules and model
 * audiences) or by uploads. No foreign keys: PostgreSQL checks one per inserted row, which was
 * more than half of a first recompute at 1M people. What they would guarantee, the code does:
 * - a member is always a person of the same workspace: every insert selects the person ids from
 *   that workspace's people (or its upsert) in the same statement or transaction;
 * - an erasure and an audience delete remove their members in their own transaction
 *   (PeopleRepository.erase, AudiencesRepository.deleteWithMembers), and a recompute holds its
 *   audience with FOR KEY SHARE, so a delete waits for it;
 * - a recompute racing an erasure can file the erased person once more; no read sees that row
 *   (members are read through people), and the recompute the erasure enqueues removes it, since
 *   every member not selected any more leaves.
 */
@Entity({ name: 'audience_members' })
@Index('audience_members_customer_person_idx', ['customerId', 'personId', 'audienceId'])
export class AudienceMember {
  @PrimaryColumn({ name: 'customer_id', type: 'bigint' })
  customerId: number;

  @PrimaryColumn({ name: 'audience_id', type: 'bigint' })
  audienceId: number;

  @PrimaryColumn({ name: 'person_id', type: 'bigint' })
  personId: number;

  @CreateDateColumn({ name: 'added_at', type: 'timestamptz' })
  addedAt: Date;
}
