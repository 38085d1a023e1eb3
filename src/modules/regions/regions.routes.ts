import { Type } from 'typebox'
import { AppError } from '../../errors.js'
import { IdParams, Result, Uuid } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { listTimezones } from './timezones.js'

const RegionSchema = Type.Object(
  { id: Uuid(), name: Type.String(), description: Type.String() },
  {
    examples: [
      { id: 'c52c1db7-5b58-40e6-b1a7-ec9ea1f09924', name: 'us-east-1', description: 'US East (N. Virginia)' },
    ],
  },
)
const anyCaller = 'Any authenticated caller (no permission needed).'

/** Regions and time zones (API.md §4.1): reference data any authenticated caller may read. */
export const regionRoutes: RouteModule = async (app, ctx) => {
  app.get(
    '/regions',
    {
      schema: {
        tags: ['regions'],
        operationId: 'listRegions',
        summary: 'List regions',
        description: `${anyCaller} The regions a tenant can be created in, by name.`,
        response: { 200: Result(Type.Array(RegionSchema)) },
      },
    },
    async () => ({
      result: await ctx.db
        .selectFrom('regions')
        .select(['id', 'name', 'description'])
        .orderBy('name')
        .execute(),
    }),
  )

  app.get(
    '/regions/:id',
    {
      schema: {
        tags: ['regions'],
        operationId: 'getRegion',
        summary: 'Get a region',
        description: anyCaller,
        errors: ['region_not_found'],
        params: IdParams,
        response: { 200: Result(RegionSchema) },
      },
    },
    async (request) => {
      const region = await ctx.db
        .selectFrom('regions')
        .select(['id', 'name', 'description'])
        .where('id', '=', request.params.id)
        .executeTakeFirst()
      if (!region) throw new AppError('region_not_found', 'Region not found')
      return { result: region }
    },
  )

  app.get(
    '/timezones',
    {
      schema: {
        tags: ['regions'],
        operationId: 'listTimezones',
        summary: 'List the IANA time zone names tenants accept',
        description: `${anyCaller} Canonical names; backward-compatible links (US/Eastern) are accepted too.`,
        response: { 200: Result(Type.Array(Type.String())) },
      },
    },
    async () => ({ result: [...listTimezones()] }),
  )
}
