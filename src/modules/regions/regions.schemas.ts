import { type Static, Type } from 'typebox'
import { Uuid } from '../../http/schemas.js'

/** Region shapes (docs/product.md#regions-and-time-zones). */

export const RegionSchema = Type.Object(
  { id: Uuid(), name: Type.String(), description: Type.String() },
  {
    examples: [
      { id: 'c52c1db7-5b58-40e6-b1a7-ec9ea1f09924', name: 'us-east-1', description: 'US East (N. Virginia)' },
    ],
  },
)
export type Region = Static<typeof RegionSchema>
