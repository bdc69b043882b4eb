import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import { describedBy, FieldFrame, FieldNotes } from './fields';
import {
  CONSENT_KINDS,
  CONSENT_OPS,
  CONSENT_VALUES,
  type ConsentNode,
  type ConsentOp,
  type GroupNode,
  emptyGroup,
  isListOp,
  listLines,
  newConsentCondition,
  newTraitCondition,
  type RuleNode,
  takesNoValue,
  TRAIT_OPS,
  type TraitNode,
  type TraitOp,
  typesFor,
  type ValueType,
  withTraitOp,
} from './rules-tree';

/** The ops in words, with the grammar's own name for those who write the JSON. */
export const OP_WORDS: Record<TraitOp, string> = {
  eq: 'is',
  neq: 'is not',
  gt: 'is greater than',
  gte: 'is at least',
  lt: 'is less than',
  lte: 'is at most',
  in: 'is one of',
  not_in: 'is none of',
  contains: 'contains',
  exists: 'exists',
  not_exists: 'does not exist',
};

const TYPE_WORDS: Record<ValueType, string> = { string: 'Text', number: 'Number', boolean: 'True or false' };

export const CONSENT_WORDS: Record<ConsentNode['consent'], string> = {
  ad_user_data: 'Ad user data consent',
  ad_personalization: 'Ad personalization consent',
};

/** The API's messages of one node, by field ('' for the node itself). */
export type NodeErrors = Map<string, Record<string, string[]>>;

/**
 * The condition tree of a rules audience, built with controls rather than typed as JSON: the top
 * group matches all or any of its conditions; each condition is a trait (name, op, a value fitting
 * the op) or a consent; a group nests conditions with its own all/any; any row but the top can be
 * negated or removed. Every control has a label, and rows are fieldsets named by their position
 * ("Condition 2", "Group 3", "Condition 3.1"), so a screen reader and the API's errors agree on
 * which one is meant.
 */
export function RulesEditor(props: { root: GroupNode; onRoot: (root: GroupNode) => void; errors: NodeErrors }) {
  return <GroupEditor node={props.root} position="" errors={props.errors} onChange={(node) => props.onRoot(node as GroupNode)} />;
}

function GroupEditor(props: {
  node: GroupNode;
  /** '' for the top group, "3" or "3.2" for a nested one. */
  position: string;
  errors: NodeErrors;
  onChange: (node: RuleNode) => void;
  onRemove?: () => void;
}) {
  const { node, position } = props;
  const id = useId();
  const top = position === '';
  const name = top ? 'Conditions' : `Group ${position}`;
  const own = props.errors.get(node.key)?.[''];
  const add = (child: RuleNode) => props.onChange({ ...node, children: [...node.children, child] });
  const change = (index: number) => (child: RuleNode) =>
    props.onChange({ ...node, children: node.children.map((existing, at) => (at === index ? child : existing)) });
  const remove = (index: number) => () => props.onChange({ ...node, children: node.children.filter((_, at) => at !== index) });
  const suffix = top ? '' : ` to group ${position}`;
  return (
    <fieldset class={`rule-group${own ? ' field-invalid' : ''}`} aria-describedby={describedBy(id, undefined, own)}>
      <legend>{name}</legend>
      <div class="rule-controls">
        <div class="field">
          <label for={`${id}-match`}>Match</label>
          <select
            id={`${id}-match`}
            value={node.match}
            onChange={(event) => props.onChange({ ...node, match: event.currentTarget.value as GroupNode['match'] })}
          >
            <option value="all">All of these conditions (all)</option>
            <option value="any">Any of these conditions (any)</option>
          </select>
        </div>
        {top ? null : <Negate id={`${id}-not`} node={node} onChange={props.onChange} />}
      </div>
      <FieldNotes id={id} errors={own} />
      {node.children.length === 0 ? (
        <p class="hint">{top ? 'No condition yet: this audience selects nobody.' : 'No condition in this group yet.'}</p>
      ) : (
        <ol class="rule-list">
          {node.children.map((child, index) => {
            const at = top ? String(index + 1) : `${position}.${index + 1}`;
            return (
              <li key={child.key}>
                {child.kind === 'group' ? (
                  <GroupEditor node={child} position={at} errors={props.errors} onChange={change(index)} onRemove={remove(index)} />
                ) : child.kind === 'trait' ? (
                  <TraitEditor node={child} position={at} errors={props.errors} onChange={change(index)} onRemove={remove(index)} />
                ) : (
                  <ConsentEditor node={child} position={at} errors={props.errors} onChange={change(index)} onRemove={remove(index)} />
                )}
              </li>
            );
          })}
        </ol>
      )}
      <div class="actions rule-actions">
        <button type="button" class="button" onClick={() => add(newTraitCondition())}>
          Add condition<span class="visually-hidden">{suffix}</span>
        </button>
        <button type="button" class="button" onClick={() => add(newConsentCondition())}>
          Add consent condition<span class="visually-hidden">{suffix}</span>
        </button>
        <button type="button" class="button" onClick={() => add({ ...emptyGroup(), children: [newTraitCondition()] })}>
          Add group<span class="visually-hidden">{suffix}</span>
        </button>
        {props.onRemove ? (
          <button type="button" class="button button-quiet" onClick={props.onRemove}>
            Remove group<span class="visually-hidden"> {position}</span>
          </button>
        ) : null}
      </div>
    </fieldset>
  );
}

function Negate(props: { id: string; node: RuleNode; onChange: (node: RuleNode) => void }) {
  return (
    <label class="checkbox rule-negate" for={props.id}>
      <input
        id={props.id}
        type="checkbox"
        checked={props.node.negated}
        onChange={(event) => props.onChange({ ...props.node, negated: event.currentTarget.checked })}
      />
      Negate (not): select the people this does not match
    </label>
  );
}

interface RowProps<T> {
  node: T;
  position: string;
  errors: NodeErrors;
  onChange: (node: RuleNode) => void;
  onRemove: () => void;
}

/** A condition's frame: its name, its fields, negate and remove, and the messages on the whole condition. */
function ConditionFrame(props: RowProps<RuleNode> & { id: string; children: ComponentChildren }) {
  const own = props.errors.get(props.node.key)?.[''];
  return (
    <fieldset class={`rule-condition${own ? ' field-invalid' : ''}`} aria-describedby={describedBy(props.id, undefined, own)}>
      <legend>Condition {props.position}</legend>
      <div class="rule-fields">{props.children}</div>
      <FieldNotes id={props.id} errors={own} />
      <div class="rule-controls">
        <Negate id={`${props.id}-not`} node={props.node} onChange={props.onChange} />
        <button type="button" class="button button-quiet" onClick={props.onRemove}>
          Remove condition<span class="visually-hidden"> {props.position}</span>
        </button>
      </div>
    </fieldset>
  );
}

/** A select or input's accessible state for its field's messages. */
const invalid = (id: string, errors?: string[], hint?: string) => ({
  id,
  'aria-invalid': errors?.length ? ('true' as const) : undefined,
  'aria-describedby': describedBy(id, hint, errors),
});

function TraitEditor(props: RowProps<TraitNode>) {
  const { node } = props;
  const id = useId();
  const errors = props.errors.get(node.key) ?? {};
  const set = (changes: Partial<TraitNode>) => props.onChange({ ...node, ...changes });
  const types = typesFor(node.op);
  const valueHint = isListOp(node.op) ? 'One value a line, at most 1,000.' : undefined;
  const traitHint = 'Its name, as in people’s traits.';
  return (
    <ConditionFrame {...props} id={id}>
      <FieldFrame id={`${id}-trait`} label="Trait" errors={errors.trait} hint={traitHint}>
        <input
          {...invalid(`${id}-trait`, errors.trait, traitHint)}
          type="text"
          value={node.trait}
          maxLength={64}
          spellcheck={false}
          autoComplete="off"
          onInput={(event) => set({ trait: event.currentTarget.value })}
        />
      </FieldFrame>
      <FieldFrame id={`${id}-op`} label="Operator" errors={errors.op}>
        <select
          {...invalid(`${id}-op`, errors.op)}
          value={node.op}
          onChange={(event) => props.onChange(withTraitOp(node, event.currentTarget.value as TraitOp))}
        >
          {TRAIT_OPS.map((op) => (
            <option key={op} value={op}>
              {OP_WORDS[op]} ({op})
            </option>
          ))}
        </select>
      </FieldFrame>
      {types.length > 1 ? (
        <FieldFrame id={`${id}-type`} label="Type">
          <select
            id={`${id}-type`}
            value={node.type}
            onChange={(event) => {
              const type = event.currentTarget.value as ValueType;
              set({ type, value: type === 'boolean' ? 'true' : node.type === 'boolean' ? '' : node.value });
            }}
          >
            {types.map((type) => (
              <option key={type} value={type}>
                {TYPE_WORDS[type]}
              </option>
            ))}
          </select>
        </FieldFrame>
      ) : null}
      {takesNoValue(node.op) ? null : isListOp(node.op) ? (
        <FieldFrame id={`${id}-value`} label="Values" errors={errors.value} hint={valueHint}>
          <textarea
            {...invalid(`${id}-value`, errors.value, valueHint)}
            rows={Math.min(6, Math.max(2, listLines(node.list).length + 1))}
            value={node.list}
            spellcheck={false}
            onInput={(event) => set({ list: event.currentTarget.value })}
          />
        </FieldFrame>
      ) : node.type === 'boolean' ? (
        <FieldFrame id={`${id}-value`} label="Value" errors={errors.value}>
          <select
            {...invalid(`${id}-value`, errors.value)}
            value={node.value}
            onChange={(event) => set({ value: event.currentTarget.value })}
          >
            <option value="true">true</option>
            <option value="false">false</option>
          </select>
        </FieldFrame>
      ) : (
        <FieldFrame id={`${id}-value`} label="Value" errors={errors.value}>
          <input
            {...invalid(`${id}-value`, errors.value)}
            type="text"
            inputMode={node.type === 'number' ? 'decimal' : undefined}
            value={node.value}
            maxLength={1000}
            onInput={(event) => set({ value: event.currentTarget.value })}
          />
        </FieldFrame>
      )}
    </ConditionFrame>
  );
}

function ConsentEditor(props: RowProps<ConsentNode>) {
  const { node } = props;
  const id = useId();
  const errors = props.errors.get(node.key) ?? {};
  const set = (changes: Partial<ConsentNode>) => props.onChange({ ...node, ...changes });
  return (
    <ConditionFrame {...props} id={id}>
      <FieldFrame id={`${id}-consent`} label="Consent" errors={errors.consent}>
        <select
          {...invalid(`${id}-consent`, errors.consent)}
          value={node.consent}
          onChange={(event) => set({ consent: event.currentTarget.value as ConsentNode['consent'] })}
        >
          {CONSENT_KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {CONSENT_WORDS[kind]}
            </option>
          ))}
        </select>
      </FieldFrame>
      <FieldFrame id={`${id}-op`} label="Operator" errors={errors.op}>
        <select
          {...invalid(`${id}-op`, errors.op)}
          value={node.op}
          onChange={(event) => {
            const op = event.currentTarget.value as ConsentOp;
            // The one value and the list carry over: "is granted" becomes "is one of: granted".
            set({ op, values: isListOp(op) && !isListOp(node.op) ? [node.value] : node.values });
          }}
        >
          {CONSENT_OPS.map((op) => (
            <option key={op} value={op}>
              {OP_WORDS[op]} ({op})
            </option>
          ))}
        </select>
      </FieldFrame>
      {isListOp(node.op) ? (
        <fieldset
          class={`field${errors.value ? ' field-invalid' : ''}`}
          aria-describedby={describedBy(`${id}-value`, undefined, errors.value)}
        >
          <legend>Values</legend>
          {CONSENT_VALUES.map((value) => (
            <label key={value} class="checkbox">
              <input
                type="checkbox"
                checked={node.values.includes(value)}
                onChange={(event) =>
                  set({
                    values: event.currentTarget.checked ? [...node.values, value] : node.values.filter((existing) => existing !== value),
                  })
                }
              />
              {value}
            </label>
          ))}
          <FieldNotes id={`${id}-value`} errors={errors.value} />
        </fieldset>
      ) : (
        <FieldFrame id={`${id}-value`} label="Value" errors={errors.value}>
          <select
            {...invalid(`${id}-value`, errors.value)}
            value={node.value}
            onChange={(event) => set({ value: event.currentTarget.value as ConsentNode['value'] })}
          >
            {CONSENT_VALUES.map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </FieldFrame>
      )}
    </ConditionFrame>
  );
}

/** The tree in words, for a page that only shows it (a viewer's, an archived audience). */
export function RulesInWords(props: { root: GroupNode }) {
  if (props.root.children.length === 0) return <span>No condition: selects nobody.</span>;
  return <GroupInWords node={props.root} />;
}

function GroupInWords(props: { node: GroupNode }) {
  const { node } = props;
  return (
    <div class="rules-in-words">
      <span>
        {node.negated ? 'Not: ' : ''}
        {node.match === 'all' ? 'All of:' : 'Any of:'}
      </span>
      <ul>
        {node.children.map((child) => (
          <li key={child.key}>{child.kind === 'group' ? <GroupInWords node={child} /> : conditionInWords(child)}</li>
        ))}
      </ul>
    </div>
  );
}

function conditionInWords(node: TraitNode | ConsentNode): string {
  const not = node.negated ? 'not: ' : '';
  if (node.kind === 'consent')
    return `${not}${CONSENT_WORDS[node.consent]} ${OP_WORDS[node.op]} ${isListOp(node.op) ? node.values.join(', ') : node.value}`;
  const shown = (text: string) => (node.type === 'string' ? `“${text}”` : text);
  const value = takesNoValue(node.op) ? '' : ` ${isListOp(node.op) ? listLines(node.list).map(shown).join(', ') : shown(node.value)}`;
  return `${not}${node.trait} ${OP_WORDS[node.op]}${value}`;
}
