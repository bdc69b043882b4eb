import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, queryOf } from '../api/client';
import type { Page } from '../api/types';
import { ConfirmDialog } from './feedback';
import { useForm } from './form';
import type { AnyReferenceSource } from './references';

/**
 * Objects that may keep this one from being deleted: those of `source` whose list filter `param`
 * is `id` (the signals whose `audience` is this audience). The API's 409 gives counts only, in its
 * detail; after one, the dialog reads these lists to link to what is in the way.
 */
export interface Blocker {
  source: AnyReferenceSource;
  param: string;
  id: number;
}

/** Objects named one by one in the dialog; beyond these, a link to the list that shows them all. */
const NAMED = 5;

interface Blocking {
  blocker: Blocker;
  count: number;
  rows: { id: number; label: string }[];
}

/**
 * Asks, then sends `DELETE path` (`path` null: the dialog is closed). A refusal (a 409, a 403) is
 * shown inside the dialog, which stays open, and a 409 links to the objects in the way
 * (`blockers`); `onClose(true)` once the API has deleted.
 */
export function DeleteDialog(props: {
  path: string | null;
  title: string;
  confirmLabel?: string;
  blockers?: Blocker[];
  onClose: (deleted: boolean) => void;
  children: ComponentChildren;
}) {
  const action = useForm({});
  const [blocking, setBlocking] = useState<Blocking[]>([]);
  const refused = action.problem?.status === 409;

  useEffect(() => {
    setBlocking([]);
    if (!refused || !props.blockers?.length) return;
    let current = true;
    Promise.all(
      props.blockers.map(async (blocker): Promise<Blocking> => {
        const query = queryOf({ [blocker.param]: blocker.id, page_size: NAMED });
        const page = await api<Page<never>>('GET', `${blocker.source.apiPath}${query}`);
        const rows = page.results.map((row: { id: number }) => ({ id: row.id, label: blocker.source.labelOf(row as never) }));
        return { blocker, count: page.count, rows };
      }),
    ).then(
      (found) => current && setBlocking(found.filter((entry) => entry.count > 0)),
      // The refusal and its counts are on screen already; without the lists there is only nothing to link to.
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [action.problem]);

  const confirm = () =>
    action.submit(async () => {
      if (props.path === null) return;
      await api('DELETE', props.path);
      props.onClose(true);
    });
  return (
    <ConfirmDialog
      open={props.path !== null}
      title={props.title}
      confirmLabel={props.confirmLabel ?? 'Delete'}
      danger
      busy={action.busy}
      problem={action.problem}
      after={blocking.length > 0 ? <BlockingLinks blocking={blocking} /> : null}
      onConfirm={() => void confirm()}
      onCancel={() => {
        action.setProblem(null);
        props.onClose(false);
      }}
    >
      {props.children}
    </ConfirmDialog>
  );
}

/** What keeps the object from being deleted: each by name, linked to its page, and all of them in their filtered list. */
function BlockingLinks(props: { blocking: Blocking[] }) {
  return (
    <div class="blockers">
      {props.blocking.map(({ blocker, count, rows }) => {
        const { source } = blocker;
        const list = `${source.appPath}${queryOf({ [blocker.param]: blocker.id })}`;
        const several = count === 1 ? source.noun : source.plural;
        return (
          <section key={`${source.apiPath}${blocker.param}`} aria-labelledby={`blockers-${source.noun}`}>
            <h3 id={`blockers-${source.noun}`}>
              Used by {count} {several}
            </h3>
            <ul>
              {rows.map((row) => (
                <li key={row.id}>
                  <a href={source.pageOf?.(row.id) ?? list}>{row.label}</a>
                </li>
              ))}
            </ul>
            {count > rows.length ? (
              <p>
                <a href={list}>
                  All {count} {source.plural} that use it
                </a>
              </p>
            ) : null}
          </section>
        );
      })}
    </div>
  );
}
