import { describeRollback, rollbackScene } from './rollback/harness.js'
import { tenantAndUserScenes } from './rollback/users.js'

/** A change and its audit event commit together (docs/webhooks.md): the writes of tenants and platform users. */
const r = rollbackScene()
describeRollback(r, tenantAndUserScenes(r))
