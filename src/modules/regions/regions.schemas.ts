import { type Static, Type } from 'typebox'
import { Uuid } from '../../http/schemas.js'

/** Region shapes (API.md §4.1). */

export const RegionSchema = Type.Object({ id: Uuid(), name: Type.String(), description: Type.String() })
export type Region = Static<typeof RegionSchema>
