import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { AiModelInstance } from '../ai-model-instances/ai-model-instance.entity.js';
import { Person } from '../people/person.entity.js';

/**
 * A person's latest score from one model instance (SPEC 10.2), 0–1, for the `version` of the model
 * it was written under: a model audience reads only the scores of its model's current version.
 */
@Entity({ name: 'model_scores' })
@Check('model_scores_score_check', `"score" >= 0 AND "score" <= 1`)
@Index('model_scores_customer_person_idx', ['customerId', 'personId'])
export class ModelScore {
  @PrimaryColumn({ name: 'customer_id', type: 'bigint' })
  customerId: number;

  @PrimaryColumn({ name: 'model_instance_id', type: 'bigint' })
  modelInstanceId: number;

  @PrimaryColumn({ name: 'person_id', type: 'bigint' })
  personId: number;

  @Column({ type: 'integer' })
  version: number;

  @Column({ type: 'double precision' })
  score: number;

  @Column({ name: 'scored_at', type: 'timestamptz', default: () => 'now()' })
  scoredAt: Date;

  @ManyToOne(() => AiModelInstance, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'model_scores_model_instance_fkey' },
    { name: 'model_instance_id', referencedColumnName: 'id', foreignKeyConstraintName: 'model_scores_model_instance_fkey' },
  ])
  modelInstance?: Relation<AiModelInstance>;

  @ManyToOne(() => Person, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'model_scores_person_fkey' },
    { name: 'person_id', referencedColumnName: 'id', foreignKeyConstraintName: 'model_scores_person_fkey' },
  ])
  person?: Relation<Person>;
}
