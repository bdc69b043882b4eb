import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client';
import type { Page } from '../api/types';
import type { Option } from './fields';

/** The first 100 objects of a list, as choices for a reference field (newest first). */
export function useChoices<T extends { id: number; name?: string; account_name?: string }>(apiPath: string): Option[] {
  const [options, setOptions] = useState<Option[]>([]);
  useEffect(() => {
    api<Page<T>>('GET', `${apiPath}?page_size=100`).then(
      (page) => setOptions(page.results.map((row) => ({ value: String(row.id), label: row.name ?? row.account_name ?? `#${row.id}` }))),
      () => setOptions([]),
    );
  }, [apiPath]);
  return options;
}

/** Options with a leading "None" for a nullable reference. */
export function withNone(options: Option[]): Option[] {
  return [{ value: '', label: 'None' }, ...options];
}

/** An enum's values as options, in words. */
export function enumOptions(values: readonly string[]): Option[] {
  return values.map((value) => ({ value, label: value.charAt(0).toUpperCase() + value.slice(1).replace(/_/g, ' ') }));
}
