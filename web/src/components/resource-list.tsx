import type { ComponentChild, ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, type Problem, ProblemError, queryOf } from '../api/client';
import type { Page } from '../api/types';
import { EmptyState, Loading, ProblemNotice } from './feedback';
import type { Option } from './fields';
import { ReferencePicker } from './reference-picker';
import type { AnyReferenceSource } from './references';

export interface Column<T> {
  label: string;
  cell: (row: T) => ComponentChild;
  numeric?: boolean;
}

/**
 * One of the list's filters, by the API's query parameter `name`: a choice among fixed `options`,
 * or an object of another list, picked by name (`reference`: the signals of one audience).
 */
export type Filter = { name: string; label: string } & ({ options: Option[] } | { reference: AnyReferenceSource });

const PAGE_SIZE = 20;

/**
 * A list of the API (SPEC section 4) with its filters, search, ordering and paging kept in the
 * page's own URL, so a filtered page can be bookmarked and the back button works.
 */
export function ResourceList<T extends { id: number }>(props: {
  apiPath: string;
  appPath: string;
  caption: string;
  columns: Column<T>[];
  filters: Filter[];
  orderings: Option[];
  empty: ComponentChildren;
  /** Changes when the list must be read again (after an action on a row). */
  version?: number;
  /** False where the API has no `search` filter (imports). */
  searchable?: boolean;
  /** The query parameter the search box fills and its label, where it is not `search` over names (people: an exact `external_id`). */
  search?: { param: string; label: string };
  /** Told each page as it is read (the Syncs page reads again while a listed run is in progress). */
  onPage?: (page: Page<T>) => void;
}) {
  const searchable = props.searchable ?? true;
  const searchParam = props.search?.param ?? 'search';
  const location = useLocation();
  const query = location.query;
  const [page, setPage] = useState<Page<T> | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [search, setSearch] = useState(query[searchParam] ?? '');
  const pageNumber = Math.max(1, Number(query.page ?? '1') || 1);
  const filtered = props.filters.some((filter) => query[filter.name]) || Boolean(query[searchParam]);

  const apiQuery = {
    ...Object.fromEntries(props.filters.map((filter) => [filter.name, query[filter.name]])),
    [searchParam]: query[searchParam],
    ordering: query.ordering,
    page: pageNumber > 1 ? pageNumber : undefined,
    page_size: PAGE_SIZE,
  };

  useEffect(() => {
    let current = true;
    setProblem(null);
    api<Page<T>>('GET', `${props.apiPath}${queryOf(apiQuery)}`).then(
      (answer) => {
        if (!current) return;
        setPage(answer);
        props.onPage?.(answer);
      },
      (error: unknown) => {
        if (!current) return;
        // A page past the end (rows were deleted meanwhile): back to the first page.
        if (error instanceof ProblemError && error.problem.status === 404 && pageNumber > 1) navigate({ page: undefined }, true);
        else if (error instanceof ProblemError) setProblem(error.problem);
      },
    );
    return () => {
      current = false;
    };
  }, [location.url, props.version]);

  useEffect(() => setSearch(query[searchParam] ?? ''), [query[searchParam]]);

  /** The list's own state in the address (filters, search, ordering, page), and nothing else: a notice's flag does not follow. */
  function navigate(changes: Record<string, string | undefined>, replace = false) {
    const kept = Object.fromEntries(
      [...props.filters.map((filter) => filter.name), searchParam, 'ordering'].map((name) => [name, query[name]]),
    );
    location.route(`${props.appPath}${queryOf({ ...kept, ...changes })}`, replace);
  }

  const first = page && page.count > 0 ? (pageNumber - 1) * PAGE_SIZE + 1 : 0;
  const last = page ? first + page.results.length - 1 : 0;

  return (
    <section class="resource-list" aria-label={props.caption}>
      <form
        class="filters"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          navigate({ [searchParam]: search.trim() || undefined });
        }}
      >
        {searchable ? (
          <div class="filter">
            <label for="list-search">{props.search?.label ?? 'Search by name'}</label>
            <div class="search-box">
              <input
                id="list-search"
                type="search"
                value={search}
                maxLength={255}
                onInput={(event) => setSearch(event.currentTarget.value)}
              />
              <button type="submit" class="button">
                Search
              </button>
            </div>
          </div>
        ) : null}
        {props.filters.map((filter) => (
          <div class="filter" key={filter.name}>
            <label for={`filter-${filter.name}`}>{filter.label}</label>
            {'reference' in filter ? (
              <ReferencePicker
                id={`filter-${filter.name}`}
                label={filter.label}
                source={filter.reference}
                value={query[filter.name] ?? ''}
                noneLabel="Any"
                placeholder="Any"
                onValue={(value) => navigate({ [filter.name]: value || undefined })}
              />
            ) : (
              <select
                id={`filter-${filter.name}`}
                value={query[filter.name] ?? ''}
                onChange={(event) => navigate({ [filter.name]: event.currentTarget.value || undefined })}
              >
                <option value="">Any</option>
                {filter.options.map((option) => (
                  <option key={option.value} value={option.value}>
                    {option.label}
                  </option>
                ))}
              </select>
            )}
          </div>
        ))}
        <div class="filter">
          <label for="list-ordering">Sort by</label>
          <select
            id="list-ordering"
            value={query.ordering ?? ''}
            onChange={(event) => navigate({ ordering: event.currentTarget.value || undefined })}
          >
            <option value="">Newest first</option>
            {props.orderings.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </div>
      </form>

      <ProblemNotice problem={problem} />
      {!page && !problem ? <Loading /> : null}
      {page && page.count === 0 ? (
        filtered ? (
          <EmptyState title="Nothing matches">
            <p>No item matches these filters.</p>
            <button type="button" class="button" onClick={() => location.route(props.appPath)}>
              Clear filters
            </button>
          </EmptyState>
        ) : (
          props.empty
        )
      ) : null}
      {page && page.count > 0 ? (
        <>
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">{props.caption}</caption>
              <thead>
                <tr>
                  {props.columns.map((column) => (
                    <th key={column.label} scope="col" class={column.numeric ? 'numeric' : undefined}>
                      {column.label}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {page.results.map((row) => (
                  <tr key={row.id}>
                    {props.columns.map((column) => (
                      <td key={column.label} class={column.numeric ? 'numeric' : undefined}>
                        {column.cell(row)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav class="pager" aria-label="Pages">
            <span>
              {first}–{last} of {page.count}
            </span>
            <button
              type="button"
              class="button"
              disabled={!page.previous}
              onClick={() => navigate({ page: pageNumber > 2 ? String(pageNumber - 1) : undefined })}
            >
              Previous
            </button>
            <button type="button" class="button" disabled={!page.next} onClick={() => navigate({ page: String(pageNumber + 1) })}>
              Next
            </button>
          </nav>
        </>
      ) : null}
    </section>
  );
}

/** The orderings every list takes (SPEC section 4), in words. */
export function orderingsOf(fields: { value: string; label: string }[]): Option[] {
  return fields.flatMap((field) => [
    { value: field.value, label: `${field.label} (ascending)` },
    { value: `-${field.value}`, label: `${field.label} (descending)` },
  ]);
}
