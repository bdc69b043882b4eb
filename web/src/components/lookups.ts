import type { Option } from './fields';

/** An enum's values as options, in words. */
export function enumOptions(values: readonly string[]): Option[] {
  return values.map((value) => ({ value, label: value.charAt(0).toUpperCase() + value.slice(1).replace(/_/g, ' ') }));
}
