import { created } from '../../http/created.js'
import { answerVisibleList, PageBody } from '../../http/pagination.js'
import { Result, TenantParams } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import type { StepUpGuard } from '../mfa-policy/step-up-guard.js'
import { CreateTenantBody, ListTenantsQuery, TenantSchema, UpdateTenantBody } from './tenants.schemas.js'
import { createTenant, getTenant, listVisibleTenants, updateTenantById } from './tenants.service.js'

const tags = ['tenants']

/**
 * Tenants (docs/product.md#the-tenant-tree, docs/api.md#tenants). `requireStepUp`: the step-up guard for
 * the second-factor policy's fields, handed in by app.ts (mfa-policy/step-up-guard.ts).
 */
export function tenantRoutes(requireStepUp: StepUpGuard): RouteModule {
  return async (app, ctx) => {
    app.post(
      '/tenants',
      {
        schema: {
          tags,
          operationId: 'createTenant',
          summary: 'Create a tenant or sub-tenant',
          description:
            'A root tenant needs MANAGE_TENANT in the caller’s platform role (a user, not an API key); a ' +
            'sub-tenant needs MANAGE_TENANT effective in the parent. The name is unique across all tenants.',
          errors: ['permission_denied', 'tenant_name_taken'],
          body: CreateTenantBody,
          response: { 201: Result(TenantSchema) },
        },
      },
      async (request, reply) => {
        const tenant = await createTenant(ctx, request.actor, request.body)
        return created(reply, `/v1/tenants/${tenant.id}`, tenant)
      },
    )

    app.get(
      '/tenants',
      {
        schema: {
          tags,
          operationId: 'listTenants',
          summary: 'List the tenants the caller can read',
          description:
            'Any authenticated caller (no permission needed): every tenant for a caller with any platform ' +
            'permission, otherwise the ' +
            'subtrees of its accepted memberships (an API key: its tenant’s subtree).',
          querystring: ListTenantsQuery,
          response: {
            200: PageBody(TenantSchema),
          },
        },
      },
      answerVisibleList(ctx, listVisibleTenants),
    )

    app.get(
      '/tenants/:tenantId',
      {
        schema: {
          tags,
          operationId: 'getTenant',
          summary: 'Get a tenant',
          description: 'Any caller who can see the tenant (no permission needed); otherwise 404.',
          errors: ['tenant_not_found'],
          params: TenantParams,
          response: { 200: Result(TenantSchema) },
        },
      },
      async (request) => ({ result: await getTenant(ctx, request.actor, request.params.tenantId) }),
    )

    app.put(
      '/tenants/:tenantId',
      {
        config: { ifMatch: 'tenants' },
        schema: {
          tags,
          operationId: 'updateTenant',
          summary: 'Update a tenant (partial)',
          description:
            'Needs MANAGE_TENANT effective in the tenant. Fields left out keep their values; If-Match is honoured. ' +
            'Changing mfaPolicy or mfaAcceptIdp is a step-up operation: for a person with a second factor, one ' +
            'at most 10 minutes old, else 401 reauthentication_required carrying the challenge ' +
            '(docs/security.md, "Step-up").',
          errors: ['tenant_not_found', 'permission_denied', 'tenant_name_taken', 'reauthentication_required'],
          params: TenantParams,
          body: UpdateTenantBody,
          response: { 200: Result(TenantSchema) },
        },
      },
      async (request) => ({
        result: await updateTenantById(
          ctx,
          request.actor,
          request.params.tenantId,
          request.body ?? {},
          requireStepUp,
        ),
      }),
    )
  }
}
