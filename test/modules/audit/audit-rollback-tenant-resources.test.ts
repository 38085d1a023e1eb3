import { describeRollback, rollbackScene } from './rollback/harness.js'
import { tenantResourceScenes } from './rollback/tenant-resources.js'

/** A change and its audit event commit together (docs/webhooks.md): the writes of integrations, API keys, roles, webhooks, identity providers and SSO sign-in. */
const r = rollbackScene()
describeRollback(r, tenantResourceScenes(r))
