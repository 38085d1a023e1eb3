import type { Keys } from '../../crypto/keys.js'
import { decryptSecret, encryptSecret, isSecretEnvelope, type SecretEnvelope } from '../../crypto/secrets.js'
import {
  type DialParams,
  type IntegrationType,
  isObjectKey,
  isSecretKey,
  type PlainProperties,
  SECRET_MASK,
} from './integration-types.js'

/**
 * Integration credentials at rest (docs/api.md#integrations). In the `properties` column a non-secret key holds its
 * plain value and a secret holds its SecretEnvelope — or "" when empty, which needs no encryption. The
 * associated data binds each ciphertext to its tenant, integration and field, so an envelope copied to
 * another row or key does not decrypt.
 */
export type StoredValue = string | boolean | DialParams | SecretEnvelope
export type StoredProperties = Record<string, StoredValue>

type SecretKeys = Pick<Keys, 'secretKey' | 'secretKeyId'>

/** UUIDs and property names hold no ':', so this encoding is unambiguous. */
export function secretAssociatedData(tenantId: string, integrationId: string, field: string): string {
  return `integration:${tenantId}:${integrationId}:${field}`
}

/** Encrypts every non-empty secret of `values`; other values pass through. */
export function sealProperties(
  keys: SecretKeys,
  type: IntegrationType,
  tenantId: string,
  integrationId: string,
  values: PlainProperties,
): StoredProperties {
  const stored: StoredProperties = {}
  for (const [key, value] of Object.entries(values)) {
    stored[key] =
      isSecretKey(type, key) && typeof value === 'string' && value !== ''
        ? encryptSecret(keys, value, secretAssociatedData(tenantId, integrationId, key))
        : value
  }
  return stored
}

/** What reads show: a set secret as SECRET_MASK, an empty one as "". Never a ciphertext, never a plaintext. */
export function maskProperties(type: IntegrationType, stored: StoredProperties): PlainProperties {
  const shown: PlainProperties = {}
  for (const [key, value] of Object.entries(stored)) {
    if (isSecretKey(type, key)) shown[key] = isSetSecret(value) ? SECRET_MASK : ''
    else if (typeof value === 'string' || typeof value === 'boolean') shown[key] = value
    else if (isObjectKey(type, key) && !isSecretEnvelope(value)) shown[key] = value
  }
  return shown
}

export function isSetSecret(value: StoredValue | undefined): value is SecretEnvelope {
  return isSecretEnvelope(value)
}

/** The plaintext of a stored secret ("" when empty); throws SecretDecryptionError when it does not decrypt. */
export function openSecret(
  keys: SecretKeys,
  tenantId: string,
  integrationId: string,
  field: string,
  value: StoredValue | undefined,
): string {
  if (!isSetSecret(value)) return ''
  return decryptSecret(keys, value, secretAssociatedData(tenantId, integrationId, field))
}
