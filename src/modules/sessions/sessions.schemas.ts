import { type Static, Type } from 'typebox'
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js'
import { AuthMethodName } from '../auth/auth.schemas.js'

/** A person's session as `GET /v1/me/sessions` shows it (docs/security.md, "Sessions"). */
export const SessionSchema = Type.Object({
  id: Uuid({ description: 'The session, as the `sid` of its tokens' }),
  created: Timestamp({ description: 'When the person signed in' }),
  lastSeen: Timestamp({ description: 'When a token of the session was last used, to the minute' }),
  ip: Nullable(Type.String({ description: 'The client address of the sign-in' })),
  userAgent: Nullable(Type.String({ description: 'The User-Agent of the sign-in, at most 512 characters' })),
  authMethods: Type.Array(AuthMethodName, { description: 'How the sign-in was won (`amr`)' }),
  current: Type.Boolean({ description: 'The session of the token this request carries' }),
})
export type Session = Static<typeof SessionSchema>

export const SessionParams = Type.Object({ sessionId: Uuid() })
