import { ChoiceFilter, IdFilter } from '../../common/validation/query-fields.js';
import { IMPORT_MODES, IMPORT_TARGETS, type ImportMode, type ImportTarget } from '../import.entity.js';

/** `POST /api/v1/imports/?target=…` (SPEC 10.1): people, or the members of an upload audience. */
export class CreateImportQuery {
  @ChoiceFilter(IMPORT_TARGETS, {
    description:
      'What the file imports: `people`, or `audience`: the members of the upload audience `audience`, by `mode` (the file’s people are upserted first, except for `remove`).',
  })
  target?: ImportTarget;

  @IdFilter({ description: 'The upload audience, for `target=audience` (required with it, refused without it).' })
  audience?: number;

  @ChoiceFilter(IMPORT_MODES, {
    description:
      'For `target=audience` (required with it): `add` the file’s people, `remove` them, or `replace` the members with them (atomically: members not in the file leave in the same transaction as the new ones arrive).',
  })
  mode?: ImportMode;
}
