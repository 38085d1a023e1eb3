import { describeRollback, rollbackScene } from './rollback/harness.js'
import { membershipScenes } from './rollback/memberships.js'

/** A change and its audit event commit together (docs/webhooks.md): the writes of memberships and invitations. */
const r = rollbackScene()
describeRollback(r, membershipScenes(r))
