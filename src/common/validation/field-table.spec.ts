import { assignFields, changedFields, createdState, type FieldTable, mergedState } from './field-table.js';

interface Thing {
  id: number;
  name: string;
  note: string;
  parentId: number | null;
  settings: Record<string, unknown>;
}

const FIELDS = [
  { api: 'name', property: 'name' },
  { api: 'note', property: 'note', initial: '' },
  { api: 'parent', property: 'parentId', initial: null, nullable: true },
  { api: 'settings', property: 'settings', initial: {}, json: true },
] as const satisfies FieldTable<Thing>;

const stored = (): Thing => ({ id: 7, name: 'Old', note: 'kept', parentId: 3, settings: { a: 1, b: 2 } });

describe('field tables', () => {
  it('fills a create from the input, and what it leaves out from the initial values', () => {
    expect(createdState<Thing, typeof FIELDS>(FIELDS, { name: 'New', parent: 5 })).toEqual({
      name: 'New',
      note: '',
      parentId: 5,
      settings: {},
    });
  });

  it('merges a PATCH over the stored object: null clears a nullable field and means "unchanged" elsewhere', () => {
    expect(mergedState<Thing, typeof FIELDS>(FIELDS, stored(), { note: null, parent: null })).toEqual({
      name: 'Old',
      note: 'kept',
      parentId: null,
      settings: { a: 1, b: 2 },
    });
  });

  it('names the changed fields by their API names, comparing JSON by value and not by key order', () => {
    const before = stored();
    expect(
      changedFields<Thing, typeof FIELDS>(FIELDS, before, mergedState<Thing, typeof FIELDS>(FIELDS, before, { settings: { b: 2, a: 1 } })),
    ).toEqual([]);
    const next = mergedState<Thing, typeof FIELDS>(FIELDS, before, { name: 'New', settings: { a: 2 } });
    expect(changedFields<Thing, typeof FIELDS>(FIELDS, before, next)).toEqual(['name', 'settings']);
  });

  it('assigns only the table’s properties, leaving the id alone', () => {
    const thing = stored();
    assignFields<Thing, typeof FIELDS>(FIELDS, thing, { name: 'New', note: 'n', parentId: null, settings: {} });
    expect(thing).toEqual({ id: 7, name: 'New', note: 'n', parentId: null, settings: {} });
  });
});
