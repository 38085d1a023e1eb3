import { Type } from 'typebox'
import { AppError } from '../../errors.js'
import { IdParams, Result } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { findRegion, listRegions } from './regions.repository.js'
import { RegionSchema } from './regions.schemas.js'
import { listTimezones } from './timezones.js'

const anyCaller = 'Any authenticated caller (no permission needed).'

/** Regions and time zones (docs/product.md#regions-and-time-zones): reference data any authenticated caller may read. */
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
    async () => ({ result: await listRegions(ctx.db) }),
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
      const region = await findRegion(ctx.db, request.params.id)
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
