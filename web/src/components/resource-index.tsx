import { useRoute } from 'preact-iso';
import { useSession } from '../session';
import { EmptyState, formatDate, Notice, PageHeader } from './feedback';
import { type Column, type Filter, orderingsOf, ResourceList } from './resource-list';

/** The orderings of the audiences, signals and models lists (SPEC section 4), both directions. */
const ORDERINGS = orderingsOf([
  { value: 'name', label: 'Name' },
  { value: 'created_at', label: 'Created' },
  { value: 'updated_at', label: 'Updated' },
  { value: 'status', label: 'Status' },
]);

/**
 * A workspace resource's list page: the header with "New …" for admins and editors, the notice
 * after a delete, the list with the name (a link to the object) first and the update time last,
 * and an empty state that invites the first one.
 */
export function ResourceIndex<T extends { id: number; name: string; updated_at: string }>(props: {
  title: string;
  description: string;
  noun: string;
  apiPath: string;
  appPath: string;
  filters: Filter[];
  columns: Column<T>[];
  emptyText: string;
}) {
  const { canWrite } = useSession();
  const { query } = useRoute();
  const create = (label: string) =>
    canWrite ? (
      <a class="button button-primary" href={`${props.appPath}/new`}>
        {label}
      </a>
    ) : null;
  return (
    <>
      <PageHeader title={props.title} description={props.description}>
        {create(`New ${props.noun}`)}
      </PageHeader>
      {query.deleted ? <Notice kind="success">The {props.noun} was deleted.</Notice> : null}
      <ResourceList<T>
        apiPath={props.apiPath}
        appPath={props.appPath}
        caption={props.title}
        filters={props.filters}
        orderings={ORDERINGS}
        columns={[
          { label: 'Name', cell: (row) => <a href={`${props.appPath}/${row.id}`}>{row.name}</a> },
          ...props.columns,
          { label: 'Updated', cell: (row) => formatDate(row.updated_at) },
        ]}
        empty={
          <EmptyState title={`No ${props.noun}s yet`}>
            <p>{props.emptyText}</p>
            {create(`Create your first ${props.noun}`)}
          </EmptyState>
        }
      />
    </>
  );
}
