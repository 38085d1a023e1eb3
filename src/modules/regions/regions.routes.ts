import { Type } from 'typebox'
import { AppError } from '../../errors.js'
import { IdParams, Result, Uuid } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { listTimezones } from './timezones.js'

const RegionSchema = Type.Object({ id: Uuid(), name: Type.String(), description: Type.String() })

/** Regions and time zones (API.md §4.1): reference data any authenticated caller may read. */
export const regionRoutes: RouteModule = async (app, ctx) => {
  app.get(
    '/regions',
    {
      schema: {
        tags: ['regions'],
        summary: 'List regions',
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
        summary: 'Get a region',
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
        summary: 'List the IANA time zone names tenants accept',
        response: { 200: Result(Type.Array(Type.String())) },
      },
    },
    async () => ({ result: [...listTimezones()] }),
  )
}
