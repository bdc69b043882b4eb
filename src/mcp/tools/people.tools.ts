import { ListPeopleQuery } from '../../people/dto/list-people.query.js';
import type { PeopleService } from '../../people/people.service.js';
import type { McpTool } from '../mcp-tool.js';
import { getTool, listTool } from './tool-helpers.js';

const restPath = '/api/v1/people/';

/** People are read-only for agents (SPEC 10.2): they show traits, consent, matched keys and audiences, never an identifier. */
export function peopleTools(people: PeopleService, publicBaseUrl: string): McpTool[] {
  return [
    listTool({
      name: 'list_people',
      title: 'List people',
      description:
        "Lists the workspace's people (the advertiser's customers), newest first, one page at a time: traits, consent, which kinds of " +
        'key they have (never an email or phone) and the audiences they are in. Filter by external_id, or by audience to see its members.',
      restPath,
      publicBaseUrl,
      query: ListPeopleQuery,
      list: (call) => people.list(call.query, call.url),
    }),
    getTool({
      name: 'get_person',
      title: 'Get a person',
      description:
        'Returns one person by id, with the ids of the audiences they are in. An id that is not in this workspace gives a not_found error.',
      restPath,
      get: (id) => people.get(id),
    }),
  ];
}
