import { AppError } from '../../errors.js'

/** The challenge of every 401 (docs/api.md#authentication): the schemes a client may answer with. */
export const WWW_AUTHENTICATE = 'Bearer realm="tenantry", Basic realm="tenantry", charset="UTF-8"'

/** 401 `unauthorized` with its WWW-Authenticate challenge: missing, malformed or wrong credentials. */
export function unauthorized(message = 'Missing or invalid credentials'): AppError {
  return new AppError('unauthorized', message, undefined, { 'www-authenticate': WWW_AUTHENTICATE })
}
